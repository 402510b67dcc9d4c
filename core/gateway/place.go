package gateway

import (
	"context"

	"github.com/clawhost/clawhost/core/placement"
	"github.com/clawhost/clawhost/core/store"
)

// Placement decides which of the hosts sharing one database runs a
// session (placement.Placement); core implements it on the store's
// session placements.
type Placement = placement.Placement

// Handed takes the entries other hosts handed to this one (it runs their
// sessions) with take (store.Cluster.TakeHanded) and resumes them:
// accepted ones are routed, queued ones run in their lanes. It returns how
// many it took. The take is made here, not by the caller, so that no
// newer message of their chats overtakes them between the store's write
// and their resuming (see placement.Placer.Here).
func (g *Gateway) Handed(ctx context.Context, take func(context.Context) ([]store.Entry, error)) (int, error) {
	select {
	case <-g.ready:
	case <-g.ctx.Done():
		return 0, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	g.place.BeginTake()
	es, err := take(ctx)
	g.resume(es, true)
	return len(es), err
}
