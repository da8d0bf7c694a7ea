// The order files start in. Vitest starts the files it has timed before
// longest-first, but a fresh clone (CI) has no timings and starts small
// files first, so a three-minute soak could begin last and end the pass
// alone. The files known to be long start first; the rest keep vitest's order.
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Longest first, from the suite's own timings (each 1.5 to 6.5 minutes). */
const LONG_FILES = [
  "interop-tests/scheduler-soak.test.ts",
  "interop-tests/cron-poller.test.ts",
  "interop-tests/unique-jobs.test.ts",
  "interop-tests/server.test.ts",
  // Ten releases one after another, about 4 minutes.
  "interop-tests/release-sweep.test.ts",
  "interop-tests/migration.test.ts",
  "interop-tests/iterable.test.ts",
  "interop-tests/cli.test.ts",
  "interop-tests/api.test.ts",
  "interop-tests/web-dashboard.test.ts",
  "interop-tests/chaos.test.ts",
  "interop-tests/unique-jobs-orphans.test.ts",
  "interop-tests/client.test.ts",
  "interop-tests/web-addons.test.ts",
  "interop-tests/server-heartbeat.test.ts",
  "interop-tests/bulk-actions-kill.test.ts",
  "interop-tests/contract.test.ts",
];

export class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONG_FILES.findIndex((name) => f.moduleId.endsWith(`/${name}`));
      return i < 0 ? LONG_FILES.length : i;
    };
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}
