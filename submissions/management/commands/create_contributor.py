from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from submissions import accounts


class Command(BaseCommand):
    help = (
        "Create a contributor account (API only, no password) and print a new API token for it. "
        "Example: python manage.py create_contributor alice --email alice@example.org"
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("name", help="the contributor's username")
        parser.add_argument("--email", default="")
        parser.add_argument("--token-name", default="created by create_contributor")

    def handle(self, *args, name: str, email: str, token_name: str, **options) -> None:
        if get_user_model().objects.filter(username=name).exists():
            raise CommandError(f"A user named {name!r} already exists; create a token on their profile page instead.")
        user = accounts.user_create(username=name, email=email)
        _, raw = accounts.api_token_create(user=user, name=token_name)
        self.stderr.write(f"Created contributor {name!r}. The API token below is shown once:")
        self.stdout.write(raw)
