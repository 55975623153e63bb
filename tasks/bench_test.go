package tasks_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/tasks"
)

// The tasks benchmarks (SQLite, service level; the figures in issue 12's note):
//
//	go test ./tasks -run '^$' -bench . -benchtime 2000x

func latencies(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// timed runs op b.N times over writers goroutines and reports ops/s and
// the latency of each op.
func timed(b *testing.B, writers int, unit string, op func(i int) error) {
	var (
		next atomic.Int64
		mu   sync.Mutex
		lat  = make([]time.Duration, 0, b.N)
		wg   sync.WaitGroup
	)
	b.ResetTimer()
	start := time.Now()
	for range writers {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > b.N {
					return
				}
				t0 := time.Now()
				if err := op(i); err != nil {
					b.Error(err)
					return
				}
				d := time.Since(t0)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), unit)
	latencies(b, lat)
}

func BenchmarkTaskCreate(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			v := newEnv(b, store.SQLite, &store.Options{Conns: 4})
			dede := v.agent("dede")
			timed(b, writers, "creates/s", func(i int) error {
				title := fmt.Sprintf("Task %d", i)
				_, err := v.tasks.Create(dede, tasks.CreateRequest{Fields: tasks.Fields{Title: &title, Labels: &[]string{"bench"}}})
				return err
			})
		})
	}
}

func BenchmarkTaskPostComment(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			v := newEnv(b, store.SQLite, &store.Options{Conns: 4})
			dede := v.agent("dede")
			v.agent("duc")
			for range 8 {
				v.create(dede, "Busy", tasks.Fields{})
			}
			timed(b, writers, "comments/s", func(i int) error {
				_, err := v.tasks.Comment(dede, tasks.CommentRequest{Number: int64(i%8 + 1), Type: atrium.CommentStatus, Body: fmt.Sprintf("step %d, cc @duc", i)})
				return err
			})
		})
	}
}

// BenchmarkAtScale reads a workspace of 10,000 tasks with 20,000
// dependencies: task_ready, task_inbox and get_desk.
func BenchmarkAtScale(b *testing.B) {
	v := newEnv(b, store.SQLite, &store.Options{Conns: 4})
	v.tasks.Pages = v.docs
	dede, duc := v.agent("dede"), v.agent("duc")
	ctx := context.Background()
	_ = ctx
	for i := 1; i <= 10000; i++ {
		f := tasks.Fields{}
		if i > 2 {
			f.BlockedBy = &[]int64{int64(i - 1), int64(i/2 + 1)}
		}
		if i%10 == 0 {
			f.Assignee = ptr("duc")
		}
		v.create(dede, fmt.Sprintf("Task %d", i), f)
		if i%3 == 0 { // every third task done, so some later ones are ready
			if _, err := v.tasks.Update(dede, tasks.UpdateRequest{Number: int64(i), Fields: tasks.Fields{Status: ptr(atrium.TaskDone)}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	for i := range 200 {
		if _, err := v.tasks.Ask(dede, int64(i+1), "duc", fmt.Sprintf("question %d", i)); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 20 {
		if _, err := v.tasks.CreateTodo(duc, fmt.Sprintf("Todo %d", i), "", nil); err != nil {
			b.Fatal(err)
		}
		if _, err := v.tasks.AddProgress(duc, fmt.Sprintf("Did %d", i), time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := v.tasks.UpdateDeskPage(duc, "Plan", "# Plan\n\n1. Everything\n"); err != nil {
		b.Fatal(err)
	}
	b.Run("task_ready", func(b *testing.B) {
		timed(b, 1, "reads/s", func(int) error { _, err := v.tasks.Ready(duc, tasks.ListRequest{Kind: atrium.KindTask}); return err })
	})
	b.Run("task_inbox", func(b *testing.B) {
		timed(b, 1, "reads/s", func(int) error { _, err := v.tasks.ReadInbox(duc, tasks.InboxRequest{}); return err })
	})
	b.Run("task_list", func(b *testing.B) {
		timed(b, 1, "reads/s", func(int) error { _, err := v.tasks.List(duc, tasks.ListRequest{Assignee: "me"}); return err })
	})
	b.Run("get_desk", func(b *testing.B) {
		timed(b, 1, "reads/s", func(int) error { _, err := v.tasks.GetDesk(duc, ""); return err })
	})
}
