/**
 * The README's client is examples/minimal/client.ts, quoted verbatim and
 * under 15 lines, and it works: run against an agent on loopback (found by
 * AGENT_URL, as the example reads it), it prints the agent's answer.
 */
import { jest } from "@jest/globals";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "../support/protos.js";
import { startAgent, type TestAgent } from "../support/task-clients.js";

jest.setTimeout(30_000);

test("the README quotes examples/minimal/client.ts verbatim, in under 15 lines", () => {
  const client = readFileSync(join(projectRoot, "examples/minimal/client.ts"), "utf8");
  expect(readFileSync(join(projectRoot, "README.md"), "utf8")).toContain("```ts\n" + client + "```");
  expect(client.trimEnd().split("\n").length).toBeLessThan(15);
});

test("the example client calls the agent its card names and prints the answer", async () => {
  let agent: TestAgent | undefined;
  const printed: unknown[] = [];
  const log = jest.spyOn(console, "log").mockImplementation((...args: unknown[]) => void printed.push(...args));
  try {
    agent = await startAgent(async function* ({ message }) {
      const part = message.parts[0]?.content;
      yield { artifact: { parts: [{ content: { case: "text", value: `You said: ${part?.case === "text" ? part.value : ""}` } }] } };
    });
    process.env["AGENT_URL"] = new URL(agent.server.cardUrl).origin;
    await import("../../examples/minimal/client.js");
    expect(printed).toEqual(["You said: Hello"]);
  } finally {
    log.mockRestore();
    delete process.env["AGENT_URL"];
    await agent?.close();
  }
});
