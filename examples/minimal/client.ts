import { textOf } from "protoc-gen-a2a/runtime";
import { createA2AServiceClient } from "../../generated/a2a_client.js";
import { Role } from "../../generated/a2a_pb.js";

// The card picks the binding and tenant; every call sends A2A-Version, and errors come back as their classes.
// A signed card must verify (key from the agent's JWKS; loopback allowed, as the agent is local).
const verifyCard = { policy: "verify-if-present", jwks: { allow: ["127.0.0.1"] } } as const;
const client = await createA2AServiceClient(process.env.AGENT_URL ?? "http://127.0.0.1:8080", { verifyCard });
const message = { messageId: crypto.randomUUID(), role: Role.USER, parts: [{ content: { case: "text" as const, value: "Hello" } }] };
for await (const event of client.sendStreamingMessage({ message })) {
  if (event.payload.case === "artifactUpdate") console.log(textOf(event.payload.value.artifact));
}
client.close();
