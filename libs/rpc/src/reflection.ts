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
import { createRequire } from 'node:module';
import type * as grpc from '@grpc/grpc-js';
import type { PackageDefinition } from '@grpc/proto-loader';
import type * as Reflection from '@grpc/reflection';
import type DescriptorExt from 'protobufjs/ext/descriptor/index.js';
import { DESCRIPTOR_SET_PATH } from '@gatehouse/contracts';
import type { ServiceDescriptor } from './proto.ts';

// both load with the first reflection call, not at start-up (issue 38 §5: building the reflection index,
// the two reflection protos parsed by proto-loader and the descriptor set decoded and re-encoded cost
// ≈ 250 ms of CPU per start on the 2-core machine)
const load = createRequire(import.meta.url);
const descriptorExt = (): typeof DescriptorExt => load('protobufjs/ext/descriptor/index.js') as typeof DescriptorExt;

/** The reflection services @grpc/reflection serves, each with the one bidirectional-streaming method. */
const REFLECTION_SERVICES = ['grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection'] as const;

type FileDescriptor = { package?: string; service?: Array<{ name?: string }> };

let files: FileDescriptor[] | undefined;

/** The FileDescriptorProto messages of the set, decoded once. */
function descriptorFiles(): FileDescriptor[] {
  files ??= (descriptorExt().FileDescriptorSet.decode(readFileSync(DESCRIPTOR_SET_PATH)) as unknown as { file: FileDescriptor[] }).file;
  return files;
}

/**
 * Adds the reflection service to `server`, describing exactly `served`: every file they import is
 * served with them, and other services declared in those files (the internal APIs beside a public
 * one) are left out of the descriptors, so a client sees only what it can call. The services are
 * registered at once, but @grpc/reflection and its index are built by the first reflection call.
 * @throws Error (on the first reflection call) when the descriptor set cannot be read (a broken
 *   checkout, not a caller error)
 */
export function addReflection(server: Pick<grpc.Server, 'addService'>, served: readonly ServiceDescriptor[]): void {
  let built: Map<string, { definition: grpc.ServiceDefinition; implementation: grpc.UntypedServiceImplementation }> | undefined;
  const build = (): NonNullable<typeof built> => {
    if (built) return built;
    const keep = new Set<string>(served.map((d) => d.fullName));
    const ext = descriptorExt();
    const fileDescriptorProtos = descriptorFiles().map((f) => {
      const service = (f.service ?? []).filter((s) => keep.has(`${f.package}.${s.name}`));
      return Buffer.from(ext.FileDescriptorProto.encode({ ...f, service }).finish());
    });
    const definition = { 'proto/': { fileDescriptorProtos } } as unknown as PackageDefinition;
    const { ReflectionService } = load('@grpc/reflection') as typeof Reflection;
    // what @grpc/reflection would register, caught and served through the definitions registered at start
    const caught = new Map<string, { definition: grpc.ServiceDefinition; implementation: grpc.UntypedServiceImplementation }>();
    new ReflectionService(definition, { services: [...keep] }).addToServer({
      addService(def: grpc.ServiceDefinition, implementation: grpc.UntypedServiceImplementation) {
        caught.set(Object.values(def)[0]!.path.split('/')[1]!, { definition: def, implementation });
      },
    } as Pick<grpc.Server, 'addService'> as grpc.Server);
    built = caught;
    return built;
  };
  for (const name of REFLECTION_SERVICES) {
    const method = (): grpc.MethodDefinition<unknown, unknown> => {
      const got = build().get(name);
      if (!got) throw new Error(`@grpc/reflection registered no ${name}`);
      return got.definition.ServerReflectionInfo!;
    };
    server.addService({
      ServerReflectionInfo: {
        path: `/${name}/ServerReflectionInfo`, requestStream: true, responseStream: true, originalName: 'serverReflectionInfo',
        requestSerialize: (v: unknown) => method().requestSerialize(v),
        requestDeserialize: (b: Buffer) => method().requestDeserialize(b),
        responseSerialize: (v: unknown) => method().responseSerialize(v),
        responseDeserialize: (b: Buffer) => method().responseDeserialize(b),
      },
    }, {
      ServerReflectionInfo: (call: grpc.ServerDuplexStream<unknown, unknown>) => {
        (build().get(name)!.implementation.ServerReflectionInfo as grpc.handleBidiStreamingCall<unknown, unknown>)(call);
      },
    });
  }
}
