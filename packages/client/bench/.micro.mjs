const N = 20000;
function time(name, fn) { for (let i = 0; i < 2000; i++) fn(); const c0 = process.cpuUsage(); for (let i = 0; i < N; i++) fn(); const c = process.cpuUsage(c0); console.log(name.padEnd(30), ((c.user + c.system) / N).toFixed(2), 'µs'); }
async function timeAsync(name, fn) { for (let i = 0; i < 2000; i++) await fn(); const c0 = process.cpuUsage(); for (let i = 0; i < N; i++) await fn(); const c = process.cpuUsage(c0); console.log(name.padEnd(30), ((c.user + c.system) / N).toFixed(2), 'µs'); }
time('AbortController', () => new AbortController());
time('AbortController+listener', () => { const c = new AbortController(); const s = AbortSignal.abort; const f = () => c.abort(); c.signal.addEventListener('abort', f, { once: true }); c.signal.removeEventListener('abort', f); });
time('setTimeout+clear', () => clearTimeout(setTimeout(() => {}, 30000)));
time('new Headers(copy)', () => new Headers({ a: '1', authorization: 'Bearer x' }));
time('new Request', () => new Request('http://127.0.0.1:1/x', { headers: { a: 'b' } }));
const body = new TextEncoder().encode(JSON.stringify({ amount: 1_000_000, currency: 'USD', syncStatus: 'synced' })).buffer;
const headers = new Headers({ 'content-type': 'application/json', 'content-length': '60' });
await timeAsync('Response+json', async () => { await new Response(body, { status: 200, headers }).json(); });
await timeAsync('Response+arrayBuffer+Response+json', async () => { const r = new Response(body, { status: 200, headers }); const b = await r.arrayBuffer(); await new Response(b, { status: 200, statusText: '', headers: r.headers }).json(); });
