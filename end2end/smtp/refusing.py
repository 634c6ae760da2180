"""An aiosmtpd handler for end2end/smtp/run.sh: stores every accepted message in a
maildir (aiosmtpd's Mailbox) and refuses some recipients the way real servers do:

  rebota…@…  550 5.1.1 (the mailbox does not exist: a bounce)
  demora…@…  451 4.2.0 (try later: a transient failure)
"""

from aiosmtpd.handlers import Mailbox


class Refusing(Mailbox):
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        local = address.split("@", 1)[0].lower()
        if local.startswith("rebota"):
            return "550 5.1.1 <%s>: mailbox unavailable" % address
        if local.startswith("demora"):
            return "451 4.2.0 <%s>: try again later" % address
        envelope.rcpt_tos.append(address)
        return "250 OK"
