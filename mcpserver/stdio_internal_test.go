package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// encodeResult's envelope is the one the SDK writes, byte for byte, and it
// leaves to the SDK what it does not handle.
func TestEncodeResultIsTheSDKsEncoding(t *testing.T) {
	result := json.RawMessage(`{"content":[{"type":"text","text":"<a & b> \u00e9 \"q\"\n"}],"structuredContent":{"path":"A.md"}}`)
	for _, v := range []any{float64(7), float64(-1), "x<&>\"y", ""} {
		id := mustID(t, v)
		r := &jsonrpc.Response{ID: id, Result: result}
		got, ok := encodeResult(r)
		if !ok {
			t.Fatalf("id %v: not encoded", id.Raw())
		}
		want, err := jsonrpc.EncodeMessage(r)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want)+"\n", string(got)); diff != "" {
			t.Errorf("id %v (-SDK +ours):\n%s", id.Raw(), diff)
		}
	}
	for _, m := range []jsonrpc.Message{
		&jsonrpc.Response{ID: mustID(t, float64(1)), Error: &jsonrpc.Error{Code: 1, Message: "no"}},
		&jsonrpc.Response{ID: mustID(t, float64(1))},
		&jsonrpc.Request{ID: mustID(t, float64(1)), Method: "ping"},
	} {
		if _, ok := encodeResult(m); ok {
			t.Errorf("%#v: encoded here, not by the SDK", m)
		}
	}
}

func mustID(t *testing.T, v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
