// Child of test/client/grpc-transport.test.ts: a gRPC client's wait for its channel (the
// follower's, between reconnections, D30) aborted after 20 ms, the client left unclosed, as a
// follow's caller that gave up leaves it. Prints how long after the wait the process exited.
import { createServer } from "node:net";
import { createA2AServiceGrpcClient } from "../../../generated/a2a_grpc.js";
import { connectionWait } from "../../../runtime/core/client/client.js";

const probe = createServer();
await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
const port = (probe.address() as { port: number }).port;
await new Promise((resolve) => probe.close(resolve));

const client = createA2AServiceGrpcClient(`127.0.0.1:${port}`);
await client.getTask({ id: "x" }).catch(() => undefined);
const waitFor = (client as unknown as Record<symbol, (ms: number, signal: AbortSignal) => Promise<void>>)[connectionWait]!;
const started = Date.now();
const aborting = new AbortController();
setTimeout(() => aborting.abort(), 20);
await waitFor.call(client, 8000, aborting.signal);
process.on("exit", () => process.stdout.write(`${Date.now() - started}\n`));
