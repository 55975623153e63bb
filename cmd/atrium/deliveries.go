package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium/agents"
)

// newDeliveryCmds are the operator's view of hand-offs on the local store:
// what was delivered to which agent, and the means to retry, cancel or hold
// it. The running server's dispatcher sees each change as it is committed.
func newDeliveryCmds(g *globals) []*cobra.Command {
	var q agents.DeliveryQuery
	var asJSON bool
	list := &cobra.Command{
		Use:   "deliveries [--agent HANDLE] [--state STATE] [--task N]",
		Short: "List deliveries: what woke, or is to wake, which agent (newest first)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withLocal(cmd, true, func(ctx context.Context, a *app) error {
				ds, err := a.Agents.Deliveries(ctx, q)
				if err != nil {
					return err
				}
				if asJSON {
					return g.printJSON(deliveriesOut(ds))
				}
				w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "ID\tSTATE\tAGENT\tTASK\tWHAT\tSESSION\tATTEMPTS\tREASON")
				for _, d := range ds {
					fmt.Fprintf(w, "%d\t%s\t@%s\t#%d\t%s\t%s\t%d\t%s\n", d.ID, d.State, d.Agent, d.Task, d.What, d.Session, d.Attempts, d.Reason)
				}
				return w.Flush()
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	list.Flags().StringVar(&q.Agent, "agent", "", "only this agent's")
	list.Flags().StringVar(&q.State, "state", "", "only those in this state: "+strings.Join(agents.DeliveryStates, ", "))
	list.Flags().Int64Var(&q.Task, "task", 0, "only this task's")
	list.Flags().IntVar(&q.Limit, "limit", 100, "at most this many (1 to 500)")
	show := &cobra.Command{
		Use:   "delivery ID",
		Short: "Show a delivery and its history",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			id, err := deliveryID(a[0])
			if err != nil {
				return err
			}
			return g.asOperator(cmd, func(ctx context.Context, app *app) (any, error) {
				d, err := app.Agents.Delivery(ctx, id)
				return deliveryOut(d), err
			})
		},
	}
	move := func(use, short string, fn func(*agents.Service, context.Context, int64) (agents.Delivery, error)) *cobra.Command {
		return &cobra.Command{
			Use: use + " ID", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, a []string) error {
				id, err := deliveryID(a[0])
				if err != nil {
					return err
				}
				return g.asOperator(cmd, func(ctx context.Context, app *app) (any, error) {
					d, err := fn(app.Agents, ctx, id)
					return deliveryOut(d), err
				})
			},
		}
	}
	pause := func(use, short string, paused bool) *cobra.Command {
		return &cobra.Command{
			Use: use + " HANDLE", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, a []string) error {
				return g.asOperator(cmd, func(ctx context.Context, app *app) (any, error) {
					ag, err := app.Agents.Pause(ctx, a[0], paused)
					return agentOut(ag), err
				})
			},
		}
	}
	return []*cobra.Command{list, show,
		move("retry", "Make a failed or unread delivery pending again, due now", (*agents.Service).RetryDelivery),
		move("cancel", "Cancel a delivery that has not been read: it wakes no one", (*agents.Service).CancelDelivery),
		pause("pause", "Pause an agent: its deliveries queue, none wakes it", true),
		pause("resume", "Resume a paused agent: its queued deliveries go out, in order", false),
	}
}

func deliveryID(s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("%q is not a delivery id: give the number atrium agent deliveries shows", s)
	}
	return id, nil
}

func deliveriesOut(ds []agents.Delivery) []map[string]any {
	out := make([]map[string]any, len(ds))
	for i, d := range ds {
		out[i] = deliveryOut(d)
	}
	return out
}

func deliveryOut(d agents.Delivery) map[string]any {
	stamp := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	out := map[string]any{"id": d.ID, "agent": d.Agent, "task": d.Task, "kind": d.Kind, "what": d.What, "text": d.Text, "state": d.State,
		"session": d.Session, "generation": d.Generation, "channel": d.Channel, "attempts": d.Attempts, "next_at": stamp(d.NextAt), "reason": d.Reason,
		"created_at": stamp(d.CreatedAt), "delivered_at": stamp(d.DeliveredAt), "acknowledged_at": stamp(d.AcknowledgedAt)}
	if d.History != nil {
		var h []map[string]any
		for _, s := range d.History {
			h = append(h, map[string]any{"at": stamp(s.At), "state": s.State, "note": s.Note})
		}
		out["history"] = h
	}
	return out
}
