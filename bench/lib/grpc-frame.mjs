// The gRPC length-prefixed message, for the benchmarks' own gRPC calls and
// both gRPC load drivers. Apart from the drivers because they answer IPC
// once imported (bench/lib/driver-ipc.mjs): the benchmark itself must not.

/** The gRPC length-prefixed message: flag 0 (not compressed), big-endian length, bytes. */
export function grpcFrame(message) {
  const frame = Buffer.allocUnsafe(5 + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  Buffer.from(message.buffer, message.byteOffset, message.length).copy(frame, 5);
  return frame;
}
