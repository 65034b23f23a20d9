// A tenant's endpoint for Sluice's deliveries, in Node with the standardwebhooks
// package: verify the signature over the body exactly as received, then process
// each webhook-id once.
const http = require("node:http");
const { Webhook } = require("standardwebhooks");

const webhook = new Webhook(process.env.WEBHOOK_SECRET); // the endpoint's whsec_... secret
// A real receiver records webhook-ids in its database, in the transaction of the
// effect, for as long as Sluice may send them again.
const seen = new Set();

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    try {
      webhook.verify(Buffer.concat(chunks), req.headers);
    } catch {
      return res.writeHead(400).end(); // not from Sluice, or altered on the way
    }
    const id = req.headers["webhook-id"];
    if (!seen.has(id)) { // else a retry of what was processed: nothing to do
      seen.add(id);
      console.log("processed", id, req.headers["ce-type"]);
    }
    res.writeHead(204).end();
  });
});

server.listen(Number(process.env.PORT ?? 8000), "127.0.0.1", () => {
  console.log("listening on", server.address().port);
});
