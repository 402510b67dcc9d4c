package pluginhost

import (
	"context"
	"errors"
	"fmt"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/host"
)

// maxBatch bounds how many inbound messages are stored in one call.
const maxBatch = 256

// pump moves a channel's inbound stream into the Inbound function and acks
// what it stored. Acks are sent by a separate goroutine so storing the next
// batch overlaps with acking the previous one; pending acks are merged.
func (i *Instance) pump(ctx context.Context, plug *host.Plugin, s *host.Stream) error {
	acks := make(chan []uint64, 64)
	ackDone := make(chan struct{})
	go func() {
		defer close(ackDone)
		for ids := range acks {
		merge:
			for {
				select {
				case more, ok := <-acks:
					if !ok {
						break merge
					}
					ids = append(ids, more...)
				default:
					break merge
				}
			}
			if err := plug.Ack(ctx, ids...); err != nil && ctx.Err() == nil {
				i.log.Warn("ack failed; the plugin will redeliver", "count", len(ids), "error", err)
			}
		}
	}()
	defer func() {
		close(acks)
		<-ackDone
	}()

	inbound := i.h.opts.Inbound
	msgs := make([]channel.InboundMessage, 0, maxBatch)
	ids := make([]uint64, 0, maxBatch)
	for {
		d, ok := <-s.C
		if !ok {
			err := s.Err()
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, host.ErrPluginExited) {
				return fmt.Errorf("plugin %s exited: %w", i.spec.Instance, err)
			}
			return fmt.Errorf("plugin %s: inbound stream: %w", i.spec.Instance, err)
		}
		msgs, ids = append(msgs[:0], d.Message), append(ids[:0], d.ID)
	drain:
		for len(msgs) < maxBatch {
			select {
			case d, ok := <-s.C:
				if !ok {
					break drain
				}
				msgs, ids = append(msgs, d.Message), append(ids, d.ID)
			default:
				break drain
			}
		}
		if inbound == nil {
			continue
		}
		if err := inbound(ctx, i.spec.Instance, msgs); err != nil {
			// Not acked: the plugin keeps the messages and redelivers them
			// on the next stream.
			i.log.Error("storing inbound messages failed; not acked", "count", len(msgs), "error", err)
			continue
		}
		acks <- append([]uint64(nil), ids...)
	}
}
