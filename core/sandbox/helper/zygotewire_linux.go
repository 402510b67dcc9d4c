//go:build linux

package helper

import (
	"encoding/binary"
	"errors"
	"math"
)

// A start request's wire form, host to helper: each field in Request's order, a
// string as its length (uvarint) and bytes, a list as its length and its items, a number
// as a uvarint (Signal, Op and the ids are never negative), a bool as one byte, User as a
// presence byte and the credential. Decoding it takes a few microseconds; as JSON the
// request (some 40 environment variables and a dozen mounts) cost the helper 5 % of its
// CPU per start.

// errZygoteWire is a request that is not one (cut short, or a length past its end).
var errZygoteWire = errors.New("malformed sandbox helper request")

// AppendRequest appends r's wire form to b.
func AppendRequest(b []byte, r *Request) []byte {
	b = appendStrs(b, r.Argv)
	b = appendStrs(b, r.Env)
	b = appendStr(b, r.Dir)
	b = appendMounts(b, r.Mounts)
	b = append(b, boolByte(r.User != nil))
	if u := r.User; u != nil {
		b = binary.AppendUvarint(b, uint64(u.UID))
		b = binary.AppendUvarint(b, uint64(u.GID))
		b = binary.AppendUvarint(b, uint64(len(u.Groups)))
		for _, g := range u.Groups {
			b = binary.AppendUvarint(b, uint64(g))
		}
	}
	return binary.AppendUvarint(b, uint64(r.Signal))
}

// appendMounts appends ms, a list of mounts.
func appendMounts(b []byte, ms []Mount) []byte {
	b = binary.AppendUvarint(b, uint64(len(ms)))
	for _, m := range ms {
		b = appendStr(b, m.Path)
		b = appendStr(b, m.Src)
		b = binary.AppendUvarint(b, uint64(m.Op))
		b = append(b, boolByte(m.Dir))
	}
	return b
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStrs(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendStr(b, s)
	}
	return b
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// zygoteDecoder reads a wire form; the first fault sticks (err) and every later read is
// zero.
type zygoteDecoder struct {
	b   []byte
	err error
}

func (d *zygoteDecoder) uint(limit uint64) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > limit {
		d.err = errZygoteWire
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count is a list's length: each item takes at least a byte, so one longer than what is
// left is a fault, not an allocation.
func (d *zygoteDecoder) count() int {
	n := d.uint(math.MaxInt32)
	if d.err == nil && n > uint64(len(d.b)) {
		d.err = errZygoteWire
		return 0
	}
	return int(n)
}

func (d *zygoteDecoder) str() string {
	n := d.count()
	if d.err != nil {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *zygoteDecoder) strs() []string {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *zygoteDecoder) bool() bool {
	if d.err != nil {
		return false
	}
	if len(d.b) == 0 || d.b[0] > 1 {
		d.err = errZygoteWire
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

// mounts reads appendMounts' list.
func (d *zygoteDecoder) mounts() []Mount {
	n := d.count()
	if n == 0 {
		return nil
	}
	ms := make([]Mount, n)
	for i := range ms {
		m := &ms[i]
		m.Path, m.Src = d.str(), d.str()
		m.Op = int(d.uint(math.MaxInt32))
		m.Dir = d.bool()
	}
	return ms
}

// decodeZygoteRequest is the request whose wire form is b, all of it.
func decodeZygoteRequest(b []byte) (Request, error) {
	d := &zygoteDecoder{b: b}
	var r Request
	r.Argv = d.strs()
	r.Env = d.strs()
	r.Dir = d.str()
	r.Mounts = d.mounts()
	if d.bool() {
		u := &User{UID: uint32(d.uint(math.MaxUint32)), GID: uint32(d.uint(math.MaxUint32))}
		if n := d.count(); n > 0 {
			u.Groups = make([]uint32, n)
			for i := range u.Groups {
				u.Groups[i] = uint32(d.uint(math.MaxUint32))
			}
		}
		r.User = u
	}
	r.Signal = int(d.uint(math.MaxInt32))
	if err := d.end(); err != nil {
		return Request{}, err
	}
	return r, nil
}

// end is the decoder's fault, or one when bytes are left over.
func (d *zygoteDecoder) end() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = errZygoteWire
	}
	return d.err
}

// A prepared start's order, helper to prepared process (preparedOrder), in the same
// form: what to confine (confine.Spec's lists), claude's path, argv, environment
// and directory. As JSON it was the prepared process's first use of encoding/json,
// whose decoders are built by reflection: about 0.1 ms of every recycled start's path.

// appendOrder appends o's wire form to b.
func appendOrder(b []byte, o *preparedOrder) []byte {
	b = appendStrs(b, o.Spec.ReadOnly)
	b = appendStrs(b, o.Spec.Writable)
	b = appendStrs(b, o.Spec.Files)
	b = appendStrs(b, o.Spec.Weaken)
	b = appendStr(b, o.Path)
	b = appendStrs(b, o.Argv)
	b = appendStrs(b, o.Env)
	return appendStr(b, o.Dir)
}

// decodeOrder is the order whose wire form is b, all of it.
func decodeOrder(b []byte) (preparedOrder, error) {
	d := &zygoteDecoder{b: b}
	var o preparedOrder
	o.Spec.ReadOnly, o.Spec.Writable, o.Spec.Files, o.Spec.Weaken = d.strs(), d.strs(), d.strs(), d.strs()
	o.Path = d.str()
	o.Argv, o.Env = d.strs(), d.strs()
	o.Dir = d.str()
	if err := d.end(); err != nil {
		return preparedOrder{}, err
	}
	return o, nil
}
