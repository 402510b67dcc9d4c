package reports

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// TestUsageRecordRoundTrip: a ledger row served by the admin endpoint
// (usageRecord) and read back by clawhost team (TurnUsage) is the row it
// was, every field filled by reflection — a field added to
// store.TurnUsage that either mapping forgets fails here.
func TestUsageRecordRoundTrip(t *testing.T) {
	t.Parallel()
	var u store.TurnUsage
	v := reflect.ValueOf(&u).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch {
		case f.Type() == reflect.TypeOf(time.Time{}):
			f.Set(reflect.ValueOf(time.Date(2026, 11, 25, 10, i, 0, 0, time.UTC)))
		case f.Type() == reflect.TypeOf(time.Duration(0)):
			f.SetInt(int64(time.Duration(1000+i) * time.Millisecond))
		case f.Kind() == reflect.String:
			f.SetString(fmt.Sprintf("s%d", i))
		case f.Kind() == reflect.Int64, f.Kind() == reflect.Int:
			f.SetInt(int64(100 + i))
		case f.Kind() == reflect.Float64:
			f.SetFloat(float64(i) + 0.25)
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		default:
			t.Fatalf("store.TurnUsage.%s: no value for a %s", v.Type().Field(i).Name, f.Type())
		}
	}
	if got := TurnUsage(usageRecord(u)); !reflect.DeepEqual(got, u) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, u)
	}
}

// TestAuditEntries: an audit row names its chat as instance:chat when it
// has one.
func TestAuditEntries(t *testing.T) {
	t.Parallel()
	got := AuditEntries([]store.AuditEvent{{Kind: store.AuditPairing, Instance: "tg", ChatID: "5", Subject: "tg:5"}, {Kind: store.AuditReload, Subject: "config.hcl"}})
	if len(got) != 2 || got[0].Chat != "tg:5" || got[0].Subject != "tg:5" || got[1].Chat != "" || got[1].Kind != store.AuditReload {
		t.Errorf("entries %+v", got)
	}
}
