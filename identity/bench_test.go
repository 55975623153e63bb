package identity_test

import (
	"context"
	"testing"

	"github.com/atrium-hq/atrium/store/storetest"
)

// BenchmarkAuthenticate is the cost every HTTP request pays before its handler.
func BenchmarkAuthenticate(b *testing.B) {
	for _, e := range storetest.Engines {
		b.Run(string(e), func(b *testing.B) {
			ctx := context.Background()
			svc := newSvc(b, storetest.MustOpen(b, e, nil))
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
