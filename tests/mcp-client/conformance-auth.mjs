// Loaded with node --import before the official conformance CLI, whose client sends no
// Authorization header: adds `Bearer $RTN_TOKEN` to each request that has none, since
// `rtn serve --http` answers 401 to every request without the token. The CLI sends through
// fetch and through undici's request() (its DNS-rebinding and header scenarios), and both
// send through undici's global dispatcher: so that is wrapped, from the undici the CLI itself
// loads (its path is process.argv[1]). fetch is wrapped too, for a CLI without undici, and
// node:http's request(), which its header-validation scenario uses to send exact headers.
// tests/integration/serve_conformance.sh.
import http from 'node:http';
import { createRequire } from 'node:module';

const token = process.env.RTN_TOKEN;
const auth = `Bearer ${token}`;

// undici passes headers as an object, a flat [name, value, ...] array or [[name, value], ...].
function withAuth(headers) {
  if (headers == null) return { authorization: auth };
  if (Array.isArray(headers)) {
    const pairs = Array.isArray(headers[0]);
    const names = pairs ? headers.map((h) => h[0]) : headers.filter((_, i) => i % 2 === 0);
    if (names.some((n) => String(n).toLowerCase() === 'authorization')) return headers;
    return pairs ? [...headers, ['authorization', auth]] : [...headers, 'authorization', auth];
  }
  if (typeof headers[Symbol.iterator] === 'function' && typeof headers.entries === 'function') {
    const h = new Headers(headers);
    if (!h.has('authorization')) h.set('authorization', auth);
    return Object.fromEntries(h.entries());
  }
  if (Object.keys(headers).some((n) => n.toLowerCase() === 'authorization')) return headers;
  return { ...headers, authorization: auth };
}

try {
  const undici = createRequire(process.argv[1])('undici');
  class AuthAgent extends undici.Agent {
    dispatch(opts, handler) {
      return super.dispatch({ ...opts, headers: withAuth(opts.headers) }, handler);
    }
  }
  undici.setGlobalDispatcher(new AuthAgent());
} catch {
  // no undici next to the CLI: fetch below still carries the token
}

const realFetch = globalThis.fetch;
globalThis.fetch = (input, init = {}) => {
  const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
  if (!headers.has('authorization')) headers.set('authorization', auth);
  return realFetch(input, { ...init, headers });
};

const realRequest = http.request;
http.request = (...args) => {
  const i = typeof args[0] === 'object' && !(args[0] instanceof URL) ? 0 : 1;
  if (i === 1 && (typeof args[1] !== 'object' || args[1] === null)) args.splice(1, 0, {});
  args[i] = { ...args[i], headers: withAuth(args[i].headers) };
  return realRequest(...args);
};
