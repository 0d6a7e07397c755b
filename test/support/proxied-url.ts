/** The same database URL, reached through a local port (a fault proxy in front of it). */
export function viaPort(url: string, port: number): string {
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);
  return proxied.toString();
}

/** Host and port a proxy forwards to. */
export function upstreamOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname || '127.0.0.1', port: Number(parsed.port || 5432) };
}
