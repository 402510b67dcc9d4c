package cluster

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/metrics"
	"github.com/clawhost/clawhost/core/store"
)

// View splits the leases into the hosts (the "host/" leases, by
// id) and the other leases (by holder, then name), judged at now; self is
// this host's id.
func View(leases []store.Lease, self string, now time.Time) ([]admin.ClusterHost, []admin.Lease) {
	var hosts []admin.ClusterHost
	var others []admin.Lease
	for _, l := range leases {
		if id, ok := strings.CutPrefix(l.Name, store.HostLeasePrefix); ok {
			info := hostInfo(l.Info)
			pid, _ := strconv.Atoi(info["pid"])
			hosts = append(hosts, admin.ClusterHost{ID: id, This: id == self, Live: l.Live(now),
				Admin: info["admin"], Version: info["version"], PID: pid, Epoch: l.Epoch,
				Since: l.Acquired, Renewed: l.Renewed, Expires: l.Expires})
			continue
		}
		others = append(others, admin.Lease{Name: l.Name, Kind: leaseKind(l.Name), Holder: l.Holder, Live: l.Live(now),
			Epoch: l.Epoch, Acquired: l.Acquired, Renewed: l.Renewed, Expires: l.Expires, Info: l.Info})
	}
	sort.Slice(hosts, func(i, j int) bool { return hosts[i].ID < hosts[j].ID })
	sort.SliceStable(others, func(i, j int) bool {
		if others[i].Holder != others[j].Holder {
			return others[i].Holder < others[j].Holder
		}
		return others[i].Name < others[j].Name
	})
	return hosts, others
}

// hostInfo parses the info of a host lease, "pid=12 incarnation=ab12
// admin=127.0.0.1:8791 version=1.2" (see membership.request), into its
// fields; a field without "=" is skipped.
func hostInfo(info string) map[string]string {
	out := make(map[string]string)
	for _, f := range strings.Fields(info) {
		if k, v, ok := strings.Cut(f, "="); ok {
			out[k] = v
		}
	}
	return out
}

// leaseKind is what a lease is for: the part of its name before the
// first "/" ("host", "channel", "session").
func leaseKind(name string) string {
	kind, _, _ := strings.Cut(name, "/")
	return kind
}

// Stat counts, at now, the live host leases and the live leases
// self holds by kind, for /metrics.
func Stat(leases []store.Lease, self string, now time.Time) metrics.ClusterStat {
	st := metrics.ClusterStat{Held: make(map[string]int)}
	for _, l := range leases {
		if !l.Live(now) {
			continue
		}
		if strings.HasPrefix(l.Name, store.HostLeasePrefix) {
			st.HostsLive++
		}
		if l.Holder == self {
			st.Held[leaseKind(l.Name)]++
		}
	}
	return st
}
