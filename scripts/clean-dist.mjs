// Removes dist/ before `npm pack` builds it again, so no file of an older
// layout (a moved or deleted module) ends up in the tarball.
import { rmSync } from "node:fs";

rmSync(new URL("../dist/", import.meta.url), { recursive: true, force: true });
