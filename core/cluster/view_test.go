package cluster

import (
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/metrics"
	"github.com/clawhost/clawhost/core/store"
)

// The status page reads back what a host writes in its lease.
func TestHostInfoReadsTheHostLease(t *testing.T) {
	t.Parallel()
	m := &membership{opts: Options{HostID: "h1", TTL: time.Second, Admin: "127.0.0.1:8791", Version: "1.2.3"}, id: "h1", tag: "ab12"}
	req := m.request()
	now := time.Unix(1_800_000_000, 0)
	hosts, _ := View([]store.Lease{{Name: req.Name, Holder: req.Holder, Info: req.Info, Epoch: 1, Expires: now.Add(time.Second)}}, "h1", now)
	want := []admin.ClusterHost{{ID: "h1", This: true, Live: true, Admin: "127.0.0.1:8791", Version: "1.2.3", PID: os.Getpid(), Epoch: 1, Expires: now.Add(time.Second)}}
	if !reflect.DeepEqual(hosts, want) {
		t.Errorf("from the lease info %q:\n got %+v\nwant %+v", req.Info, hosts, want)
	}
}

func TestClusterView(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	live, dead := now.Add(10*time.Second), now.Add(-20*time.Second)
	leases := []store.Lease{ // as ListLeases returns them: by name
		{Name: "channel/dc", Holder: "h2", Epoch: 1, Expires: live},
		{Name: "channel/tg", Holder: "h1", Epoch: 3, Expires: live, Info: "poller"},
		{Name: "host/h1", Holder: "h1", Info: "pid=12 incarnation=x admin= version=dev", Epoch: 1, Acquired: now.Add(-time.Hour), Renewed: now.Add(-time.Second), Expires: live},
		{Name: "host/h2", Holder: "h2", Info: "garbage pid=x", Epoch: 2, Expires: dead},
		{Name: "session/tg:direct:1", Holder: "h1", Epoch: 1, Expires: dead},
		{Name: "session/tg:direct:2", Holder: "h1", Epoch: 1, Expires: live},
	}
	hosts, others := View(leases, "h1", now)
	wantHosts := []admin.ClusterHost{
		{ID: "h1", This: true, Live: true, PID: 12, Version: "dev", Epoch: 1, Since: now.Add(-time.Hour), Renewed: now.Add(-time.Second), Expires: live},
		{ID: "h2", Epoch: 2, Expires: dead},
	}
	if !reflect.DeepEqual(hosts, wantHosts) {
		t.Errorf("hosts:\n got %+v\nwant %+v", hosts, wantHosts)
	}
	var names []string
	for _, l := range others {
		names = append(names, l.Holder+" "+l.Kind+" "+l.Name)
	}
	wantNames := []string{"h1 channel channel/tg", "h1 session session/tg:direct:1", "h1 session session/tg:direct:2", "h2 channel channel/dc"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("leases by holder: %q, want %q", names, wantNames)
	}
	if others[0].Info != "poller" || !others[0].Live || others[1].Live {
		t.Errorf("lease details: %+v", others[:2])
	}

	got := Stat(leases, "h1", now)
	want := metrics.ClusterStat{HostsLive: 1, Held: map[string]int{"host": 1, "channel": 1, "session": 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Stat = %+v, want %+v", got, want)
	}
}
