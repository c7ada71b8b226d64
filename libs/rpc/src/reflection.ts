/**
 * @module @gatehouse/rpc/reflection
 * gRPC server reflection on the public gRPC port (issue 15; the gRPC Server Reflection Protocol,
 * `grpc.reflection.v1` and `v1alpha`), through the well-kept `@grpc/reflection`: tools such as
 * grpcurl and Postman list the public services and call them without a copy of `proto/`. Only the
 * services the port serves are listed; the internal (service-to-service) APIs never are.
 *
 * The descriptors come from buf's FileDescriptorSet of `proto/` (`gen/descriptor-set.binpb` of
 * @gatehouse/contracts), not from @grpc/proto-loader: proto-loader's descriptors carry synthetic file
 * names and no dependency lists, so a client that links files (grpcurl, any Go or C++ client) cannot
 * resolve an imported type such as `google.protobuf.Struct` (grpc-node issue 3034).
 */
import { readFileSync } from 'node:fs';
import type * as grpc from '@grpc/grpc-js';
import type { PackageDefinition } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import descriptorExt from 'protobufjs/ext/descriptor/index.js';
import { DESCRIPTOR_SET_PATH } from '@gatehouse/contracts';
import type { ServiceDescriptor } from './proto.ts';

type FileDescriptor = { package?: string; service?: Array<{ name?: string }> };

let files: FileDescriptor[] | undefined;

/** The FileDescriptorProto messages of the set, decoded once. */
function descriptorFiles(): FileDescriptor[] {
  files ??= (descriptorExt.FileDescriptorSet.decode(readFileSync(DESCRIPTOR_SET_PATH)) as unknown as { file: FileDescriptor[] }).file;
  return files;
}

/**
 * Adds the reflection service to `server`, describing exactly `served`: every file they import is
 * served with them, and other services declared in those files (the internal APIs beside a public
 * one) are left out of the descriptors, so a client sees only what it can call.
 * @throws Error when the descriptor set cannot be read (a broken checkout, not a caller error)
 */
export function addReflection(server: Pick<grpc.Server, 'addService'>, served: readonly ServiceDescriptor[]): void {
  const keep = new Set<string>(served.map((d) => d.fullName));
  const fileDescriptorProtos = descriptorFiles().map((f) => {
    const service = (f.service ?? []).filter((s) => keep.has(`${f.package}.${s.name}`));
    return Buffer.from(descriptorExt.FileDescriptorProto.encode({ ...f, service }).finish());
  });
  // the package-definition shape @grpc/reflection reads: each entry's encoded `fileDescriptorProtos`
  const definition = { 'proto/': { fileDescriptorProtos } } as unknown as PackageDefinition;
  new ReflectionService(definition, { services: [...keep] }).addToServer(server);
}
