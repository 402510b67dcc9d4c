package whatsapp

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.mau.fi/whatsmeow/proto/waAdv"
	"go.mau.fi/whatsmeow/types"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

// TestProbe: the probe reads the plugin's own device store, read-only: no
// data dir or no database yet, and a store without a device, are "not
// linked yet" (a warning saying how to link); a linked device is the
// identity. The probe creates no file.
func TestProbe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run := func(dir string) probe.Report {
		t.Helper()
		rep, err := Probe(ctx, schema.Config{Instance: "wa", DataDir: dir, JSON: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	missing := filepath.Join(t.TempDir(), "never")
	if rep := run(missing); rep.Worst() != probe.Warn || rep.Checks[0].Do == "" {
		t.Errorf("no data dir: %+v", rep)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("the probe created the data dir: %v", err)
	}

	dir := t.TempDir()
	db, container, err := openStore(ctx, dir, waLog.Noop)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if rep := run(dir); rep.Worst() != probe.Warn || rep.Identity.ID != "" {
		t.Errorf("no device yet: %+v", rep)
	}
	dev := container.NewDevice()
	jid := types.NewADJID("15551234567", 0, 7)
	dev.ID, dev.PushName = &jid, "Claw"
	dev.Account = &waAdv.ADVSignedDeviceIdentity{Details: []byte{1}, AccountSignature: make([]byte, 64),
		AccountSignatureKey: make([]byte, 32), DeviceSignature: make([]byte, 64)}
	if err := container.PutDevice(ctx, dev); err != nil {
		t.Fatal(err)
	}
	rep := run(dir)
	if rep.Worst() != probe.OK || rep.Identity.ID != "+15551234567" || rep.Identity.Name != "Claw" {
		t.Errorf("linked: %+v", rep)
	}
}
