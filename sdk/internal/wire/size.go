package wire

import "google.golang.org/protobuf/proto"

func protoSize(m proto.Message) int { return proto.Size(m) }
