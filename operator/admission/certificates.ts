/**
 * The webhook's own certificates: a self-signed CA and a serving certificate it signs, both ECDSA P-256, generated
 * with @peculiar/x509 on Node's WebCrypto (no openssl binary, no cert-manager needed). Everything is PEM in and out,
 * as a `kubernetes.io/tls` Secret and a webhook's `caBundle` hold it. Reading certificates uses node:crypto's
 * X509Certificate; @peculiar/x509 only builds them.
 */
// tsyringe (which @peculiar/x509 uses inside) refuses to load without a Reflect metadata polyfill; it must be
// evaluated before @peculiar/x509, so it is the first import of the only file that imports the library.
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { createPrivateKey, webcrypto, X509Certificate } from "node:crypto";
import { isIP } from "node:net";

/** A certificate and its private key, PEM (the key PKCS#8). */
export interface CertificatePair {
  readonly cert: string;
  readonly key: string;
}

export interface CertificateAuthorityOptions {
  /** notAfter − now. */
  readonly validityMs: number;
  /** Wall-clock milliseconds since the epoch: the issue time. */
  readonly nowMs: number;
  /** @default "myapp-operator-webhook-ca" (a timestamp is appended, so two generations are told apart) */
  readonly commonName?: string;
}

export interface ServingCertificateOptions {
  /** The CA that signs it (its key must be in the pair). */
  readonly ca: CertificatePair;
  /** DNS names and IP addresses the server is reached at; each becomes a SAN, the first is also the CN. */
  readonly hosts: readonly string[];
  /** notAfter − now; cut to the CA's notAfter, as a certificate cannot outlive its issuer. */
  readonly validityMs: number;
  readonly nowMs: number;
}

const algorithm = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
// Passed explicitly, so no global provider (x509.cryptoProvider) has to be set for the library.
const crypto = webcrypto;

/**
 * How far notBefore lies in the past: a replica whose clock runs ahead of the apiserver's would otherwise hand out
 * a certificate that is "not yet valid" there (controller-runtime's cert rotator backdates an hour). A tenth of the
 * validity, at most an hour, so a short-lived test certificate stays mostly in the future.
 */
export function backdateMs(validityMs: number): number {
  return Math.min(3_600_000, Math.floor(validityMs / 10));
}

/** A new self-signed CA that may sign leaf certificates only (pathLen 0). */
export async function createCertificateAuthority(options: CertificateAuthorityOptions): Promise<CertificatePair> {
  positive("validityMs", options.validityMs);
  const keys = await generateKeys();
  const name = `CN=${options.commonName ?? "myapp-operator-webhook-ca"}@${Math.floor(options.nowMs / 1000)}`;
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name,
      keys,
      signingAlgorithm: algorithm,
      notBefore: new Date(options.nowMs - backdateMs(options.validityMs)),
      notAfter: new Date(options.nowMs + options.validityMs),
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  return { cert: `${cert.toString("pem")}\n`, key: await privateKeyPem(keys.privateKey) };
}

/** A new serverAuth certificate for `hosts`, signed by `ca`. */
export async function createServingCertificate(options: ServingCertificateOptions): Promise<CertificatePair> {
  positive("validityMs", options.validityMs);
  if (options.hosts.length === 0) throw new Error("hosts: a serving certificate needs at least one DNS name or IP");
  const issuer = new x509.X509Certificate(options.ca.cert);
  const caKey = await webcrypto.subtle.importKey(
    "pkcs8",
    pkcs8Der(options.ca.key),
    { name: algorithm.name, namedCurve: algorithm.namedCurve },
    false,
    ["sign"],
  );
  const issuerSki = issuer.getExtension(x509.SubjectKeyIdentifierExtension);
  const keys = await generateKeys();
  const notAfter = Math.min(options.nowMs + options.validityMs, issuer.notAfter.getTime());
  const cert = await x509.X509CertificateGenerator.create(
    {
      subject: `CN=${options.hosts[0]}`,
      // The CA's subject as encoded, so name matching in every TLS client sees identical bytes.
      issuer: issuer.subjectName,
      publicKey: keys.publicKey,
      signingKey: caKey,
      signingAlgorithm: algorithm,
      notBefore: new Date(options.nowMs - backdateMs(options.validityMs)),
      notAfter: new Date(notAfter),
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension(options.hosts.map(generalName)),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
        ...(issuerSki ? [new x509.AuthorityKeyIdentifierExtension(issuerSki.keyId)] : []),
      ],
    },
    crypto,
  );
  return { cert: `${cert.toString("pem")}\n`, key: await privateKeyPem(keys.privateKey) };
}

/** The validity window of a PEM certificate, in epoch milliseconds. */
export function validityOf(certPem: string): { readonly notBefore: number; readonly notAfter: number } {
  const cert = new X509Certificate(certPem);
  return { notBefore: cert.validFromDate.getTime(), notAfter: cert.validToDate.getTime() };
}

/**
 * True when less than a third of the certificate's lifetime is left (or it has expired): renewing at two thirds,
 * as kubelet and cert-manager do, leaves a third of the lifetime to retry a renewal that fails.
 */
export function needsRotation(certPem: string, nowMs: number): boolean {
  const { notBefore, notAfter } = validityOf(certPem);
  return notAfter - nowMs < (notAfter - notBefore) / 3;
}

/** True once `nowMs` is past the certificate's notAfter. */
export function isExpired(certPem: string, nowMs: number): boolean {
  return validityOf(certPem).notAfter < nowMs;
}

/** True when `cert` was signed by `issuer` (its issuer name matches and the signature verifies with its key). */
export function isIssuedBy(certPem: string, issuerPem: string): boolean {
  const cert = new X509Certificate(certPem);
  const issuer = new X509Certificate(issuerPem);
  return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
}

/** True when `keyPem` is the private key of `certPem`. */
export function keyMatches(certPem: string, keyPem: string): boolean {
  return new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem));
}

/** The SANs of a certificate as plain hosts (DNS names and IPs), in the certificate's order. */
export function hostsOf(certPem: string): string[] {
  const altNames = new X509Certificate(certPem).subjectAltName ?? "";
  // Node formats them "DNS:a, IP Address:127.0.0.1" (names with ", " in them are quoted, which hosts never need).
  return altNames
    .split(", ")
    .filter((entry) => entry !== "")
    .map((entry) => entry.replace(/^(?:DNS|IP Address):/, ""));
}

/** Splits a PEM bundle into its certificates (each a PEM block ending in a newline). */
export function splitPemBundle(bundle: string): string[] {
  return [...bundle.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)].map((m) => `${m[0]}\n`);
}

/** A DER fingerprint (SHA-256, hex with colons) that names one certificate in logs and comparisons. */
export function fingerprintOf(certPem: string): string {
  return new X509Certificate(certPem).fingerprint256;
}

function generalName(host: string): { type: "dns" | "ip"; value: string } {
  if (isIP(host)) return { type: "ip", value: host };
  if (!/^(?:\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/i.test(host)) {
    throw new Error(`hosts: "${host}" is neither an IP address nor a DNS name (letters, digits, "-" and ".")`);
  }
  return { type: "dns", value: host.toLowerCase() };
}

function generateKeys(): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey({ name: algorithm.name, namedCurve: algorithm.namedCurve }, true, [
    "sign",
    "verify",
  ]);
}

async function privateKeyPem(key: webcrypto.CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey("pkcs8", key);
  return x509.PemConverter.encode(der, "PRIVATE KEY") + "\n";
}

/** PKCS#8 DER of a PEM private key in any encoding Node reads (PKCS#8, or SEC1 "EC PRIVATE KEY"). */
function pkcs8Der(keyPem: string): Buffer {
  return createPrivateKey(keyPem).export({ type: "pkcs8", format: "der" });
}

function positive(field: string, value: number): void {
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${field} must be a positive number, got ${value}`);
}
