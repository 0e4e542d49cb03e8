// Preload (`node --import ./loopback.mjs ...`) for server-everything's HTTP
// transports. They call `app.listen(PORT)` without a host, which listens on
// every interface, and the package has no option to change that. Tests must not
// expose a server beyond the machine, so we fill in a loopback host whenever a
// listen call names a port but no host.
//
// It also logs the address actually bound, so a test can pass PORT=0 (let the
// kernel pick a free port, avoiding collisions between parallel tests) and read
// the real port from stderr; the server's own log would just say "port 0".
import net from "node:net";

const host = process.env.HOST || "127.0.0.1";
const originalListen = net.Server.prototype.listen;

net.Server.prototype.listen = function (...args) {
  const [port, maybeHost] = args;
  const isPort =
    typeof port === "number" || (typeof port === "string" && /^\d+$/.test(port));
  if (isPort && typeof maybeHost !== "string") {
    args.splice(1, 0, host);
    this.once("listening", () => {
      const { address, port: bound } = this.address();
      console.error(`loopback.mjs: listening on http://${address}:${bound}`);
    });
  }
  return originalListen.apply(this, args);
};
