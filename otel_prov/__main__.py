import sys

from otel_prov.cli import main

sys.exit(main())
