package wire

import (
	"reflect"
	"testing"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
)

// TestSenderAltIDs: alternate sender ids cross the wire; an older plugin's
// sender (no alt_ids) arrives with none.
func TestSenderAltIDs(t *testing.T) {
	t.Parallel()
	s := channel.Sender{ID: "+15550001", Name: "Ann", AltIDs: []string{"42@lid"}}
	if got := SenderFromProto(SenderToProto(s)); !reflect.DeepEqual(got, s) {
		t.Errorf("round trip: %+v, want %+v", got, s)
	}
	if got := SenderFromProto(&pb.Sender{Id: "1"}); got.AltIDs != nil {
		t.Errorf("older sender: AltIDs %q, want nil", got.AltIDs)
	}
}
