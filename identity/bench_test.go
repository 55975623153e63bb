package identity_test

import (
	"context"
	"testing"

	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// BenchmarkAuthenticate is the cost every HTTP request pays before its handler.
func BenchmarkAuthenticate(b *testing.B) {
	for _, e := range storetest.Engines {
		b.Run(string(e), func(b *testing.B) {
			ctx := context.Background()
			svc := mustServiceTB(b, e)
			boot, err := svc.Bootstrap(ctx, true)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := svc.Authenticate(ctx, boot.AdminToken, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func mustServiceTB(tb testing.TB, e store.Engine) *identitySvc {
	return newSvc(tb, storetest.MustOpen(tb, e, nil))
}
