package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/postgres"
	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
)

// BenchmarkOlderOpen is the cost of the cluster's ordering check
// (store.Cluster.OlderOpen: is an older message of the chat still out of
// this host's hands?), which the session's host makes once per message it
// routes: one read, here with 400 open entries of 100 chats, a quarter
// of them another host's.
//
//	go test ./core/store/postgres -run '^$' -bench OlderOpen -benchtime 500x
func BenchmarkOlderOpen(b *testing.B) {
	srv := pgtest.Cluster(b)
	url := srv.NewDatabase(b)
	ctx := context.Background()
	other, err := postgres.Open(ctx, url, postgres.Options{Host: "B"})
	if err != nil {
		b.Fatal(err)
	}
	defer other.Close()
	d, err := postgres.Open(ctx, url, postgres.Options{Host: "A"})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	var ids []int64
	for i := range 400 {
		s := d
		if i%4 == 0 {
			s = other
		}
		res, err := s.Accept(ctx, store.Inbound{Instance: "tg", ChatID: fmt.Sprint(i % 100), MessageID: fmt.Sprint(i)})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, err := d.OlderOpen(ctx, ids[i%len(ids)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
