{
  description = "function-modelplane: a Crossplane function scheduling LLM inference replicas across GPU clusters";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-25.05";

  outputs =
    { self, nixpkgs }:
    let
      inherit (nixpkgs) lib;
      systems = [
        "x86_64-linux"
        "aarch64-linux"
        "x86_64-darwin"
        "aarch64-darwin"
      ];
      forAllSystems = f: lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});

      # One flake check per concern, each running the scripts/checks.sh subcommand that CI runs,
      # so Nix and CI execute the same commands.
      checkScripts = {
        ruff-format = "format";
        ruff-check = "lint";
        pyright = "typecheck";
        pytest = "unit";
        shell-lint = "shell";
        nix-lint = "nix";
      };

      # crossplane-function-sdk-python has no nixpkgs package (nor has cel-expr-python, whose
      # wheels carry a native extension), and the SDK needs a newer grpcio than nixpkgs may
      # ship. So these checks build the project's venv from PyPI exactly as CI does
      # (`make .venv/.installed`). That needs the network, so they are marked __noChroot:
      # they run with `sandbox = false` (as nix.sh sets) or `sandbox = relaxed`. A fixed-output
      # wheelhouse would keep the sandbox, but without a lock file its hash would break on every
      # upstream release within pyproject's version ranges.
      pythonChecks = [
        "ruff-format"
        "ruff-check"
        "pyright"
        "pytest"
      ];

      # PyPI's manylinux wheels (grpcio, cel-expr-python) expect the C++ runtime and zlib on the
      # system library path, which Nix does not provide.
      wheelLibraryPath =
        pkgs:
        lib.makeLibraryPath (
          lib.optionals pkgs.stdenv.isLinux [
            pkgs.stdenv.cc.cc.lib
            pkgs.zlib
          ]
        );

      mkCheck =
        pkgs: name: subcommand:
        let
          python = lib.elem name pythonChecks;
        in
        pkgs.runCommand "modelplane-${name}"
          (
            {
              nativeBuildInputs =
                if python then
                  [
                    pkgs.python311
                    pkgs.gnumake
                    pkgs.nodejs # pyright's PyPI wheel bundles the JavaScript, not node
                    pkgs.bash
                  ]
                else if name == "shell-lint" then
                  [
                    pkgs.shellcheck
                    pkgs.shfmt
                    pkgs.bash
                  ]
                else
                  [
                    pkgs.nixfmt-rfc-style
                    pkgs.statix
                    pkgs.deadnix
                    pkgs.bash
                  ];
            }
            // lib.optionalAttrs python {
              __noChroot = true;
              SSL_CERT_FILE = "${pkgs.cacert}/etc/ssl/certs/ca-bundle.crt";
              LD_LIBRARY_PATH = wheelLibraryPath pkgs;
            }
          )
          ''
            cp -R ${self} src
            chmod -R u+w src
            cd src
            export HOME=$TMPDIR
            ${lib.optionalString python "make .venv/.installed PYTHON=python3"}
            bash scripts/checks.sh ${subcommand}
            touch $out
          '';
    in
    {
      checks = forAllSystems (pkgs: lib.mapAttrs (mkCheck pkgs) checkScripts);

      devShells = forAllSystems (pkgs: {
        default = pkgs.mkShell {
          packages = [
            pkgs.python311
            pkgs.gnumake
            pkgs.nodejs
            pkgs.ruff
            pkgs.pyright
            pkgs.shellcheck
            pkgs.shfmt
            pkgs.nixfmt-rfc-style
            pkgs.statix
            pkgs.deadnix
          ];
          # scripts/checks.sh prefers the pinned tools in .venv (make creates it) over these.
          shellHook = ''
            export LD_LIBRARY_PATH=${wheelLibraryPath pkgs}''${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
          '';
        };
      });

      # `nix run .#fix`: apply formatters and ruff's autofixes to the checkout.
      apps = forAllSystems (pkgs: {
        fix = {
          type = "app";
          program = lib.getExe (
            pkgs.writeShellApplication {
              name = "modelplane-fix";
              runtimeInputs = [
                pkgs.ruff
                pkgs.shfmt
                pkgs.nixfmt-rfc-style
              ];
              text = ''exec bash scripts/checks.sh fix "$@"'';
            }
          );
        };
      });

      # No package output: a pure Nix build of the function would need Nix packages for the SDK
      # and for cel-expr-python (a native extension shipped as wheels), plus a grpcio at least as
      # new as the SDK's generated code demands (1.76). The runtime image comes from the
      # Dockerfile instead (`make package`).
      formatter = forAllSystems (pkgs: pkgs.nixfmt-rfc-style);
    };
}
