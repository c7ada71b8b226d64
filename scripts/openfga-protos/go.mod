module gatehouse/openfga-protos

go 1.25

require (
	github.com/openfga/api/proto v0.0.0-20260319214821-f153694bfc20
	google.golang.org/protobuf v1.34.1
)

require (
	github.com/envoyproxy/protoc-gen-validate v1.0.4 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.19.1 // indirect
	golang.org/x/net v0.38.0 // indirect
	golang.org/x/sys v0.31.0 // indirect
	golang.org/x/text v0.23.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20240528184218-531527333157 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20240528184218-531527333157 // indirect
	google.golang.org/grpc v1.64.1 // indirect
)
