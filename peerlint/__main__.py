from peerlint.server.cli import main

raise SystemExit(main())
