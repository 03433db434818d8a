// Target "ceiling" of bench/tasks.mjs, HTTP+JSON: the bare node:http ceiling of
// bench/http-json/server-ceiling.mjs answering what a task runtime answers
// (echoTaskMintedJson: the task with a minted id, its status timestamp and
// the user's message in its history), so that ours-tasks/ceiling compares
// the same answer bytes.
import { echoTaskMintedJson } from "../lib/a2a-fixture.mjs";
import { createBenchServer as createCeiling } from "../http-json/server-ceiling.mjs";

export const createBenchServer = () => createCeiling(echoTaskMintedJson);
