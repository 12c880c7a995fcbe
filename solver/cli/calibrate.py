"""``procure calibrate``: per-bucket profiles and efficiency factors from measurements."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from solver.cli.common import (
    CatalogOpt,
    DebugOpt,
    ForceOpt,
    _check_format,
    _choices,
    _load_catalog,
    _run,
    app,
    catalog_inputs,
)
from solver.errors import ProcureError
from solver.outputs.files import (
    check_not_inputs,
    check_output_dir,
    csv_text,
    write_files_together,
)


@app.command("calibrate")
def calibrate_cmd(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="vLLM benchmark_serving result JSON, CSV of measurements, or Mélange profile JSON"
        ),
    ],
    accelerator: Annotated[
        list[str] | None,
        typer.Option(
            "--accelerator",
            help="ID: the accelerator of vLLM results; NAME=ID: map a name in a file (repeatable)",
        ),
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model preset (default: each file's)")] = None,
    runtime: Annotated[
        str | None, typer.Option(help="vllm | sglang | tensorrt-llm | tgi | ... (default: file's)")
    ] = None,
    tpot_slo_ms: Annotated[
        float | None, typer.Option(help="Runs over this mean TPOT are no bucket's figure, ms")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder for profiles.yaml and factors.csv")
    ] = None,
    format: Annotated[
        str,
        typer.Option("--format", help="Output format", **_choices("table", "json")),
    ] = "table",
    catalog: CatalogOpt = None,
    force: ForceOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Per-bucket profiles and fitted efficiency factors from your own measurements."""

    def body() -> None:
        from solver.analyses.calibrate import (
            calibrate,
            calibration_json,
            parse_accelerator_options,
            profiles_yaml,
        )
        from solver.outputs.text import calibration_text

        _check_format(format, "table", "json")
        default_acc, names = parse_accelerator_options(accelerator)
        texts = []
        for path in files:
            try:
                texts.append((str(path), path.read_text(encoding="utf-8")))
            except UnicodeDecodeError:
                raise ProcureError(
                    "not a text file", file=str(path), fix="pass a JSON or CSV file"
                ) from None
            except OSError as exc:
                raise ProcureError(
                    f"cannot read it ({exc.strerror})", file=str(path), fix="check the path"
                ) from None
        result = calibrate(
            texts,
            _load_catalog(catalog),
            accelerator=default_acc,
            accelerator_names=names,
            model=model,
            runtime=runtime,
            tpot_slo_ms=tpot_slo_ms,
        )
        if out is not None:
            written = {
                "profiles.yaml": profiles_yaml(result, [t[0] for t in texts]),
                "factors.csv": csv_text(result.factors),  # neutralised cells
            }
            check_output_dir(out, list(written), force=force)
            inputs = [("measurement file", path) for path in files] + catalog_inputs(catalog)
            check_not_inputs([("--out", out / name) for name in written], inputs)
            write_files_together(out, written)
        typer.echo(calibration_json(result) if format == "json" else calibration_text(result))
        if out is not None:
            wrote = f"wrote {out / 'profiles.yaml'}, {out / 'factors.csv'}"
            typer.echo(wrote, err=format == "json")  # stdout stays one JSON document

    _run(debug, body)
