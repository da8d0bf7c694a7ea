// A throwaway CA and a server certificate for 127.0.0.1, made with openssl.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureDebianPackages } from "./prepare.js";

export interface TestCerts {
  dir: string;
  ca: Buffer;
  /** redis-server flags serving TLS on `port` with these certificates. */
  redisConfig(port: number): string[];
  remove(): void;
}

export function makeTestCerts(): TestCerts {
  ensureDebianPackages({ openssl: "openssl" });
  const dir = mkdtempSync(join(tmpdir(), "sidekiq-bridge-tls-"));
  const sh = (...a: string[]) => execFileSync("openssl", a, { cwd: dir, stdio: "ignore" });
  sh(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "2",
    "-subj",
    "/CN=bridge-test-ca",
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
  );
  sh("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "server.key", "-out", "server.csr");
  execFileSync("sh", ["-c", "printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext"], { cwd: dir });
  sh(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    "san.ext",
    "-out",
    "server.crt",
  );
  return {
    dir,
    ca: readFileSync(join(dir, "ca.crt")),
    redisConfig: (port) => [
      `tls-port ${port}`,
      `tls-cert-file ${dir}/server.crt`,
      `tls-key-file ${dir}/server.key`,
      `tls-ca-cert-file ${dir}/ca.crt`,
      "tls-auth-clients no",
    ],
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
