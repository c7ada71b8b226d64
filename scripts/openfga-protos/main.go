// Command openfga-protos writes the descriptors of OpenFGA's published API (the Go module
// github.com/openfga/api/proto, the one the pinned OpenFGA server is built with) as a protobuf
// FileDescriptorSet: openfga/v1/openfga_service.proto and every file it imports. The authz service's
// gRPC form of openfga.v1.OpenFGAService loads it (services/authz/src/openfga-api/grpc.ts).
// Run by scripts/gen-openfga-protos.sh.
package main

import (
	"fmt"
	"os"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: openfga-protos <out.binpb>")
		os.Exit(2)
	}
	root := openfgav1.File_openfga_v1_openfga_service_proto
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(f protoreflect.FileDescriptor)
	// dependencies first, as protoc writes a set with --include_imports
	add = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		imports := f.Imports()
		for i := 0; i < imports.Len(); i++ {
			add(imports.Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(f))
	}
	add(root)
	out, err := proto.MarshalOptions{Deterministic: true}.Marshal(set)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[1], out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d files, %d bytes\n", len(set.File), len(out))
}
