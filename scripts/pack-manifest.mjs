// The package.json that goes into the tarball. Its scripts build, test and
// benchmark this repository from files the tarball does not hold (scripts/,
// src/, bench/), and npm 11 holds back a `prepare` when the tarball is
// installed; so `prepack` (after the build) writes package.json without
// `scripts`, keeping the original beside it, and `postpack` puts it back.
// npm runs `postpack` from the manifest it read before `prepack`, and reads
// package.json again for the tarball, so the stripped file is what is packed.
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";

const manifest = new URL("../package.json", import.meta.url);
const kept = new URL("../.package.json.unpacked", import.meta.url);

const step = process.argv[2];
if (step === "strip") {
  // A pack that failed before postpack left the original here: keep it, never overwrite it with a stripped file.
  if (!existsSync(kept)) renameSync(manifest, kept);
  const { scripts: _scripts, ...packed } = JSON.parse(readFileSync(kept, "utf8"));
  writeFileSync(manifest, JSON.stringify(packed, null, 2) + "\n");
} else if (step === "restore") {
  if (existsSync(kept)) renameSync(kept, manifest);
} else {
  console.error("usage: node scripts/pack-manifest.mjs strip|restore");
  process.exit(2);
}
