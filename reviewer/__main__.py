from reviewer.cli.program import main

raise SystemExit(main())
