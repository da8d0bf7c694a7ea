// `sidekiq-bridge --version`: this package's version, read from its package.json
// (two levels up from both src/tools/cli/ and dist/tools/cli/).
import { readFileSync } from "node:fs";

export function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}
