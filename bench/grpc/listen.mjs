// Binds a grpc-js Server (insecure) to 127.0.0.1 on a free port, the way
// bench/lib/serve.mjs's startBenchServer() contract wants it.
export function listen(server, ServerCredentials) {
  return new Promise((resolve, reject) => {
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, port) => {
      if (err) return reject(err);
      resolve({ port, close: () => server.forceShutdown() });
    });
  });
}
