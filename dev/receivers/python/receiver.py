"""A tenant's endpoint for Sluice's deliveries, in Python with the standardwebhooks
package: verify the signature over the body exactly as received, then process
each webhook-id once."""
import os
from http.server import BaseHTTPRequestHandler, HTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

webhook = Webhook(os.environ["WEBHOOK_SECRET"])  # the endpoint's whsec_... secret
# A real receiver records webhook-ids in its database, in the transaction of the
# effect, for as long as Sluice may send them again.
seen = set()


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            webhook.verify(body, dict(self.headers))
        except (WebhookVerificationError, ValueError):
            return self.answer(400)  # not from Sluice, or altered on the way
        msg_id = self.headers["webhook-id"]
        if msg_id not in seen:  # else a retry of what was processed: nothing to do
            seen.add(msg_id)
            print("processed", msg_id, self.headers["ce-type"], flush=True)
        self.answer(204)

    def answer(self, status):
        self.send_response(status)
        self.end_headers()


server = HTTPServer(("127.0.0.1", int(os.environ.get("PORT", "8000"))), Receiver)
print("listening on", server.server_address[1], flush=True)
server.serve_forever()
