from fampnb.cli import main

raise SystemExit(main())
