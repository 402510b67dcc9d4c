package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/tables"
)

var _ store.Cluster = (*DB)(nil)

// wakeChannel is the NOTIFY channel of the hosts' wake-ups; a payload is
// "<kind>\x1f<host>\x1f<instance>".
const wakeChannel = "clawhost_wake"

func wakePayload(w store.Wake) string {
	return strings.Join([]string{w.Kind, w.Host, w.Instance}, "\x1f")
}

// PlaceSession implements [store.Cluster]: the placement moves only when
// its host's lease is missing or expired.
func (d *DB) PlaceSession(ctx context.Context, key, want string) (string, error) {
	if key == "" || want == "" {
		return "", errors.New("place session: key and host are required")
	}
	wctx, cancel, err := d.begin(ctx)
	if err != nil {
		return "", err
	}
	defer cancel()
	now := d.now().UnixNano()
	var host string
	err = d.pool.QueryRow(wctx, `INSERT INTO placements(session_key, host, placed_at) VALUES ($1, $2, $3)
		ON CONFLICT (session_key) DO UPDATE SET host = excluded.host, placed_at = excluded.placed_at
		WHERE placements.host <> excluded.host AND NOT EXISTS
			(SELECT 1 FROM leases WHERE name = $4 || placements.host AND expires_at > $3)
		RETURNING host`, key, want, now, store.HostLeasePrefix).Scan(&host)
	if errors.Is(err, pgx.ErrNoRows) {
		err = d.pool.QueryRow(wctx, `SELECT host FROM placements WHERE session_key = $1`, key).Scan(&host)
	}
	if err != nil {
		return "", fmt.Errorf("place session: %w", d.closed(err))
	}
	return host, nil
}

// PlacementCounts implements [store.Cluster].
func (d *DB) PlacementCounts(ctx context.Context) (map[string]int, error) {
	return tables.Counts(d.reader(ctx), "count placements", `SELECT host, count(*) FROM placements GROUP BY host`)
}

// Handoff implements [store.Cluster].
func (d *DB) Handoff(ctx context.Context, to string, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	if to == "" {
		return errors.New("hand off: no host")
	}
	_, err := d.exec(ctx, `WITH h AS (
			UPDATE journal SET owner = $1, handed = true, updated_at = $2
			WHERE id = ANY($3) AND state IN ('accepted', 'queued') RETURNING id)
		SELECT pg_notify($4, $5) FROM (SELECT 1 FROM h LIMIT 1) x`,
		to, d.now().UnixNano(), ids, wakeChannel, wakePayload(store.Wake{Kind: store.WakeHanded, Host: to}))
	if err != nil {
		return fmt.Errorf("hand off: %w", err)
	}
	return nil
}

// OlderOpen implements [store.Cluster]. The open entries are few and
// indexed (journal_open).
func (d *DB) OlderOpen(ctx context.Context, id int64) (bool, error) {
	var older bool
	err := d.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM journal n, journal o
		WHERE n.id = $1 AND o.id < n.id AND o.state IN ('accepted', 'queued', 'processing')
		AND o.instance = n.instance AND o.chat_id = n.chat_id AND o.thread_id = n.thread_id
		AND (o.owner <> $2 OR o.handed))`, id, d.opts.Host).Scan(&older)
	if err != nil {
		return false, fmt.Errorf("older open entries of %d: %w", id, d.closed(err))
	}
	return older, nil
}

// TakeHanded implements [store.Cluster].
func (d *DB) TakeHanded(ctx context.Context) ([]store.Entry, error) {
	wctx, cancel, err := d.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	es, err := tables.Entries(d.pool.Query(wctx, `UPDATE journal SET handed = false
		WHERE id IN (SELECT id FROM journal WHERE owner = $1 AND handed ORDER BY id FOR UPDATE SKIP LOCKED)
		RETURNING `+entryCols, d.opts.Host))
	if err != nil {
		return nil, fmt.Errorf("take handed entries: %w", d.closed(err))
	}
	// An entry the host ran meanwhile (its session's lane read it from the
	// queue) only loses its mark.
	es = slices.DeleteFunc(es, func(e store.Entry) bool { return e.State != store.StateAccepted && e.State != store.StateQueued })
	// RETURNING does not keep the order.
	slices.SortFunc(es, func(a, b store.Entry) int { return cmp.Compare(a.ID, b.ID) })
	return es, nil
}

// Relay implements [store.Cluster].
func (d *DB) Relay(ctx context.Context, r store.RelayCall) (int64, error) {
	if r.Instance == "" || r.Op == "" {
		return 0, errors.New("relay: instance and op are required")
	}
	wctx, cancel, err := d.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer cancel()
	var id int64
	err = d.pool.QueryRow(wctx, `WITH r AS (
			INSERT INTO relay(instance, origin, op, request, no_reply, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id)
		SELECT id FROM r, pg_notify($7, $8)`,
		r.Instance, d.opts.Host, r.Op, []byte(r.Request), r.NoReply, d.now().UnixNano(),
		wakeChannel, wakePayload(store.Wake{Kind: store.WakeRelay, Instance: r.Instance})).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("relay %s to %s: %w", r.Op, r.Instance, d.closed(err))
	}
	return id, nil
}

// ClaimRelays implements [store.Cluster].
func (d *DB) ClaimRelays(ctx context.Context, instances []string, limit int) ([]store.RelayCall, error) {
	if len(instances) == 0 {
		return nil, nil
	}
	if limit <= 0 {
		limit = 64
	}
	wctx, cancel, err := d.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	rows, err := d.pool.Query(wctx, `UPDATE relay SET state = 'claimed', claimed_by = $1
		WHERE id IN (SELECT id FROM relay WHERE state = 'new' AND instance = ANY($2) ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING id, instance, origin, op, request, no_reply, created_at`, d.opts.Host, instances, limit)
	if err != nil {
		return nil, fmt.Errorf("claim relayed calls: %w", d.closed(err))
	}
	defer rows.Close()
	var out []store.RelayCall
	for rows.Next() {
		var c store.RelayCall
		var req []byte
		var created int64
		if err := rows.Scan(&c.ID, &c.Instance, &c.Origin, &c.Op, &req, &c.NoReply, &created); err != nil {
			return nil, fmt.Errorf("claim relayed calls: %w", err)
		}
		c.Request, c.Created = req, store.FromUnixNano(created)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("claim relayed calls: %w", d.closed(err))
	}
	slices.SortFunc(out, func(a, b store.RelayCall) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// FinishRelay implements [store.Cluster]. A call nobody waits for is
// deleted instead.
func (d *DB) FinishRelay(ctx context.Context, id int64, res store.RelayResult) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	_, err = d.exec(ctx, `WITH del AS (DELETE FROM relay WHERE id = $1 AND no_reply RETURNING id),
			upd AS (UPDATE relay SET state = 'done', result = $2 WHERE id = $1 AND NOT no_reply RETURNING origin)
		SELECT pg_notify($3, $4 || origin) FROM upd`, id, b, wakeChannel, store.WakeRelayDone+"\x1f")
	if err != nil {
		return fmt.Errorf("finish relayed call: %w", err)
	}
	return nil
}

// AbandonClaims implements [store.Cluster].
func (d *DB) AbandonClaims(ctx context.Context) (int, error) {
	res, _ := json.Marshal(store.RelayResult{Code: "uncertain", Error: "the host serving the channel stopped during the call"})
	tag, err := d.exec(ctx, `WITH a AS (UPDATE relay SET state = 'done', result = $2 WHERE claimed_by = $1 AND state = 'claimed' AND NOT no_reply RETURNING origin),
			n AS (DELETE FROM relay WHERE claimed_by = $1 AND state = 'claimed' AND no_reply)
		SELECT pg_notify($3, $4 || origin) FROM a`, d.opts.Host, res, wakeChannel, store.WakeRelayDone+"\x1f")
	if err != nil {
		return 0, fmt.Errorf("abandon relayed calls: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// TakeRelay implements [store.Cluster].
func (d *DB) TakeRelay(ctx context.Context, id int64) (store.RelayStatus, error) {
	wctx, cancel, err := d.begin(ctx)
	if err != nil {
		return store.RelayStatus{}, err
	}
	defer cancel()
	var st store.RelayStatus
	var state string
	var res []byte
	err = d.pool.QueryRow(wctx, `WITH del AS (DELETE FROM relay WHERE id = $1 AND state = 'done' RETURNING state, claimed_by, result)
		SELECT state, claimed_by, result FROM del
		UNION ALL SELECT state, claimed_by, result FROM relay WHERE id = $1 AND state <> 'done'`, id).Scan(&state, &st.ClaimedBy, &res)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, fmt.Errorf("relayed call %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return st, fmt.Errorf("relayed call %d: %w", id, d.closed(err))
	}
	st.State = store.RelayState(state)
	if st.State == store.RelayDone && len(res) > 0 {
		if err := json.Unmarshal(res, &st.Result); err != nil {
			return st, fmt.Errorf("relayed call %d: %w", id, err)
		}
	}
	return st, nil
}

// CancelRelay implements [store.Cluster].
func (d *DB) CancelRelay(ctx context.Context, id int64) (bool, error) {
	tag, err := d.exec(ctx, `DELETE FROM relay WHERE id = $1 AND state = 'new'`, id)
	if err != nil {
		return false, fmt.Errorf("cancel relayed call: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Listen implements [store.Cluster]: LISTEN on one connection of its
// own, taken from the pool and given back when ctx ends.
func (d *DB) Listen(ctx context.Context, fn func(store.Wake)) error {
	for ctx.Err() == nil {
		err := d.listenOnce(ctx, fn)
		if ctx.Err() != nil || d.isClosed.Load() {
			break
		}
		d.log.Warn("listening for wake-ups failed; reconnecting", "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	return ctx.Err()
}

func (d *DB) listenOnce(ctx context.Context, fn func(store.Wake)) error {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection that listened is not given back to the pool.
	pc := conn.Hijack()
	defer pc.Close(context.Background())
	if _, err := pc.Exec(ctx, `LISTEN `+wakeChannel); err != nil {
		return err
	}
	for {
		n, err := pc.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		p := strings.SplitN(n.Payload, "\x1f", 3)
		for len(p) < 3 {
			p = append(p, "")
		}
		w := store.Wake{Kind: p[0], Host: p[1], Instance: p[2]}
		if (w.Kind == store.WakeHanded || w.Kind == store.WakeRelayDone) && w.Host != d.opts.Host {
			continue
		}
		fn(w)
	}
}
