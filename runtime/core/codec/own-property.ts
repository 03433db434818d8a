/**
 * Sets an own property, "__proto__" included: a map key or a JSON name
 * chosen by a client, a handler or a proto may be "__proto__", and a plain
 * assignment would set the object's prototype instead (protobuf-es sets it
 * as an own property).
 */
export function setOwn(o: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
  else o[key] = value;
}
