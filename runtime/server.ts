// The "protoc-gen-a2a/runtime/server" entry: one call serving an agent on every
// binding. Apart from the main entry since it loads @grpc/grpc-js.
export * from "./a2a/serve.js";
