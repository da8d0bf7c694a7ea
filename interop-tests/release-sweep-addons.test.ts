// The add-on gems of ../shared/peers/ruby on every sweep release their
// gemspec allows (support-matrix.ts ADDON_RELEASES): one cross-language check
// per gem release and Sidekiq release, through the gem's own code on that
// release. The gem releases a Sidekiq release allows load in one Ruby
// process (two, where two releases of one gem are allowed: 7.3 and 8.x).
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { addonAllows, PEERS_SRC } from "../harness/local-backend.js";
import { requirementAllows, SWEEP, sweepTargets } from "../harness/versions.js";
import { runGroup } from "./support/addon-sweep.js";
import { describeEachRelease, selected } from "./support/harness.js";
import { supportResults } from "./support/support-results.js";
import { ADDON_RELEASES, addonGroups, addonTitle } from "./support/support-matrix.js";

describe("release sweep: add-on gemspecs", () => {
  it("the Sidekiq ranges committed in support-matrix.ts are the gemspecs' own", () => {
    for (const a of ADDON_RELEASES) {
      expect(existsSync(`${PEERS_SRC}/${a.folder}`), `${PEERS_SRC}/${a.folder}`).toBe(true);
      for (const t of SWEEP)
        expect(requirementAllows(a.sidekiq, t.version), `${a.folder} on ${t.version}`).toBe(
          addonAllows(a.folder, t.version),
        );
    }
  });
});

const targets = sweepTargets(selected());
const record = supportResults(
  "addons",
  targets.map((t) => t.version),
);

describeEachRelease("release sweep: add-ons", targets, (sk) => {
  for (const group of addonGroups(sk.target.version)) {
    let ran: Promise<Map<string, unknown>> | undefined;
    for (const a of group)
      it(addonTitle(a), async () => {
        ran ??= runGroup(sk, group);
        const error = (await ran).get(a.folder);
        if (error !== undefined) throw error;
        record(sk.target.version, a.folder);
      });
  }
});
