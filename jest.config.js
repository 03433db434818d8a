import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

// Suites that start a server from a Debian package (.ci/run installs them). Without the package
// they are left out with a notice, so `npm test` passes on a fresh machine; .ci/run sets
// A2A_REQUIRE_SYSTEM_PACKAGES=1, which keeps them in (and failing, if the package is missing).
const postgresBin = "/usr/lib/postgresql";
const systemSuites = [
  { name: "nginx", present: existsSync(process.env.NGINX ?? "/usr/sbin/nginx"), files: ["test/proxy/nginx\\.test\\.ts"] },
  {
    name: "postgresql",
    present: existsSync(postgresBin) && readdirSync(postgresBin).some((v) => existsSync(join(postgresBin, v, "bin", "initdb"))),
    files: [
      "test/tasks/sql-store\\.test\\.ts",
      "test/tasks/store-postgres\\.test\\.ts",
      "test/tasks/push-outbox\\.test\\.ts",
      "test/tasks/multi-process\\.test\\.ts",
      "test/bench/stores-smoke\\.test\\.ts",
    ],
  },
];
const skipped = process.env.A2A_REQUIRE_SYSTEM_PACKAGES === "1" ? [] : systemSuites.filter((s) => !s.present);
if (skipped.length > 0) {
  const names = skipped.map((s) => s.name).join(" and ");
  process.stderr.write(`\nNOTICE: leaving out the suites that need Debian's ${names} (apt-get install -y ${names}; .ci/run does). Set A2A_REQUIRE_SYSTEM_PACKAGES=1 to run them anyway.\n\n`);
}

/** @type {import("jest").Config} */
export default {
  testEnvironment: "node",
  // Jest's default on two cores is one worker; most suites wait on sockets,
  // child processes (buf, tsc, python) or the plugin, so two workers on the
  // two cores this project's machines have keep both busy and about halve
  // the wall time.
  maxWorkers: 2,
  // A suite blocked where jest's timeouts cannot reach it (a synchronous call that never returns, a
  // loop in JavaScript) is named, and killed after A2A_SUITE_LIMIT_S, instead of hanging the run.
  reporters: ["default", "<rootDir>/test/support/watchdog/reporter.mjs"],
  setupFilesAfterEnv: ["<rootDir>/test/support/watchdog/setup.mjs"],
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/", ...skipped.flatMap((s) => s.files)],
  extensionsToTreatAsEsm: [".ts"],
  moduleNameMapper: {
    "^protoc-gen-a2a/runtime$": "<rootDir>/runtime/index.ts",
    "^protoc-gen-a2a/runtime/internal$": "<rootDir>/runtime/internal.ts",
    "^protoc-gen-a2a/runtime/grpc$": "<rootDir>/runtime/grpc.ts",
    "^protoc-gen-a2a/runtime/adapters$": "<rootDir>/runtime/adapters/frameworks.ts",
    "^protoc-gen-a2a/runtime/server$": "<rootDir>/runtime/server.ts",
    "^protoc-gen-a2a/runtime/tasks$": "<rootDir>/runtime/tasks.ts",
    "^protoc-gen-a2a/runtime/signing$": "<rootDir>/runtime/signing.ts",
    "^(\\.{1,2}/.*)\\.js$": "$1",
  },
  transform: {
    "^.+\\.ts$": ["ts-jest", { useESM: true }],
  },
};
