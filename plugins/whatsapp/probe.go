package whatsapp

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

// IDForms are how operators write a WhatsApp id in clawhost's config: a
// person is "+<number>" however written (15551234567, +15551234567,
// 15551234567@s.whatsapp.net); a LID or a group keeps its JID.
var IDForms = []channel.IDForm{
	{Pattern: `\+?([0-9]{5,20})(?:@s\.whatsapp\.net)?`, Canonical: "+$1",
		Hint: "a WhatsApp person is a phone number with its country code (+15551234567)"},
	{Pattern: `[0-9]+(?:-[0-9]+)?@(?:lid|g\.us)`, Hint: "a group is its JID (…@g.us)"},
}

// probeTimeout bounds the probe's read of the database.
const probeTimeout = 10 * time.Second

// Probe is sdk.Plugin.Probe: WhatsApp has no token, so it tells whether a
// phone linked this instance — its device store in the data dir holds a
// device — and which number that is. It opens the database read-only and
// creates nothing: a running instance may hold it open meanwhile.
func Probe(ctx context.Context, cfg schema.Config) (probe.Report, error) {
	var rep probe.Report
	if _, err := decodeConfig(cfg); err != nil {
		return rep, err
	}
	path := filepath.Join(cfg.DataDir, dbFile)
	notYet := probe.Check{Name: "linked device", Verdict: probe.Warn, Found: "no phone linked yet",
		Do: "start clawhost and scan the QR code on the status page or in clawhost status with WhatsApp on the phone (Settings → Linked devices → Link a device)"}
	cannot := func(err error) (probe.Report, error) {
		rep.Checks = append(rep.Checks, probe.Check{Name: "linked device", Verdict: probe.Warn, Found: "cannot read " + path + ": " + err.Error(),
			Do: "run this as the user the plugin runs as"})
		return rep, nil
	}
	if cfg.DataDir == "" {
		rep.Checks = append(rep.Checks, notYet)
		return rep, nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		rep.Checks = append(rep.Checks, notYet)
		return rep, nil
	} else if err != nil {
		return cannot(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return cannot(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var jid, name string
	err = db.QueryRowContext(ctx, "SELECT jid, COALESCE(push_name, '') FROM whatsmeow_device LIMIT 1").Scan(&jid, &name)
	switch {
	case errors.Is(err, sql.ErrNoRows), err != nil && strings.Contains(err.Error(), "no such table"):
		rep.Checks = append(rep.Checks, notYet)
		return rep, nil
	case err != nil:
		return cannot(err)
	}
	// A device JID is "<number>:<device>@s.whatsapp.net".
	number, _, _ := strings.Cut(jid, "@")
	number, _, _ = strings.Cut(number, ":")
	rep.Identity = probe.Identity{ID: "+" + number, Name: name, Link: "https://wa.me/" + number}
	rep.Checks = append(rep.Checks, probe.Check{Name: "linked device", Verdict: probe.OK, Found: "a phone linked this device (+" + number + ")"})
	return rep, nil
}
