//! `track-upstream`: notice upstream MMKV releases missing from versions.yaml and add them, plan
//! the CI slices, and file the nightly hunt's failure signatures as issues.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use track_upstream::add_version::{
    check_core_dir, current_source, resolve_git_source, resolve_npm_source, run_steps, test_steps,
    update_versions_file,
};
use track_upstream::check::{run_check, CheckOptions};
use track_upstream::edit::EditAction;
use track_upstream::git::{ls_remote_tags, UPSTREAM_URL};
use track_upstream::hunt::{self, merge};
use track_upstream::hunt_issues::{
    run_hunt_issues, HuntIssueOptions, HUNT_LABEL, HUNT_LABEL_DESCRIPTION,
};
use track_upstream::issues::{GhCli, IssueTracker, ListTracker, DEFAULT_LABEL};
use track_upstream::npm::{CoreProbe, FixtureProbe, NpmCli, PackingProbe, DEFAULT_PACKAGES};
use track_upstream::plan::{anchors, plan_slices};
use track_upstream::tags::{parse_tag_list, split_package_spec, Tag};
use track_upstream::versions::{find_versions_file, Source, VersionsFile, VersionsFileExt};

/// Replaces every tag's git URL when fetching (a mirror, a clone or a bundle file).
const GIT_URL_VAR: &str = "MMKV_GIT_URL";
use track_upstream::{Error, Result};

/// Notices upstream MMKV release tags that versions.yaml lacks and opens one issue per tag
/// (without a subcommand), adds a tag to versions.yaml (`add-version`), prints the CI matrix
/// (`plan-slices`) or files the hunt's failure signatures (`hunt-issues`).
#[derive(Parser, Debug)]
#[command(
    name = "track-upstream",
    version,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    check: CheckArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Pin a tag in versions.yaml from its upstream git tag (default: fetch it, record its
    /// `Core/` tree hash), an npm package (`--npm`) or a local Core checkout (`--core-dir`),
    /// then build and test it.
    AddVersion(AddArgs),
    /// Print the CI matrix: versions.yaml's tags cut into slices, as one line of JSON
    /// (`[{"name", "tags", "versions"}]`; `versions` = the slice plus the anchors).
    PlanSlices(PlanArgs),
    /// Open one issue per new failure signature of `conformance hunt --json` summaries (one
    /// per CI shard, merged), or comment on a signature's existing issue when its example got
    /// smaller or its closed issue's difference is back.
    HuntIssues(HuntArgs),
}

#[derive(Args, Debug)]
struct HuntArgs {
    /// A `conformance hunt --json` summary (repeatable; signatures are merged by id).
    #[arg(long = "summary", value_name = "FILE", required = true)]
    summaries: Vec<PathBuf>,
    /// Print `new:` / `update:` lines instead of opening issues and commenting.
    #[arg(long)]
    dry_run: bool,
    /// With --dry-run: take existing issues from FILE (`gh issue list --json
    /// number,title,state` output, entries optionally with `body`, `comments`, `closedAt`).
    #[arg(long, value_name = "FILE", requires = "dry_run")]
    existing_issues: Option<PathBuf>,
    /// The CI run whose artifacts hold the failure folders (named in the issue text).
    #[arg(long, value_name = "URL")]
    run_url: Option<String>,
    /// Label of the hunt's issues.
    #[arg(long, default_value = HUNT_LABEL)]
    label: String,
    /// The GitHub CLI to run.
    #[arg(long, value_name = "PROGRAM", default_value = "gh")]
    gh: String,
}

#[derive(Args, Debug)]
struct PlanArgs {
    /// How many slices (CI jobs per architecture).
    #[arg(long, value_name = "N", default_value_t = 5)]
    slices: usize,
    /// versions.yaml to read [default: the nearest one from the current directory up].
    #[arg(long, value_name = "FILE")]
    versions: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct CheckArgs {
    /// versions.yaml to compare with [default: the nearest one from the current directory up].
    #[arg(long, value_name = "FILE")]
    versions: Option<PathBuf>,
    /// Read upstream tags from FILE (one tag or `git ls-remote` line per line) instead of
    /// running `git ls-remote`.
    #[arg(long, value_name = "FILE")]
    tags_from: Option<PathBuf>,
    /// Repository whose tags `git ls-remote --tags` lists.
    #[arg(long, value_name = "URL", default_value = UPSTREAM_URL)]
    upstream_url: String,
    /// Seconds before `git ls-remote` is given up.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    ls_remote_timeout: u64,
    /// Do not probe npm packages.
    #[arg(long)]
    no_npm: bool,
    /// Answer npm questions from FILE (YAML/JSON list of {package, version, mmkv_version})
    /// instead of the registry.
    #[arg(long, value_name = "FILE", conflicts_with = "no_npm")]
    npm_from: Option<PathBuf>,
    /// Another npm package that embeds MMKV/Core, probed besides react-native-mmkv and
    /// react-native-mmkv-storage (repeatable).
    #[arg(long = "npm-package", value_name = "PACKAGE")]
    npm_packages: Vec<String>,
    /// Probe at most this many of the newest unpinned versions of each package.
    #[arg(long, value_name = "N", default_value_t = 3)]
    npm_max: usize,
    /// Report tags missing from versions.yaml from this tag on [default: its oldest tag].
    #[arg(long, value_name = "TAG")]
    since: Option<Tag>,
    /// Print `new: vX.Y.Z` lines instead of opening issues.
    #[arg(long)]
    dry_run: bool,
    /// With --dry-run: take existing issues from FILE (`gh issue list --json number,title`
    /// output, or one title per line) and skip their tags.
    #[arg(long, value_name = "FILE", requires = "dry_run")]
    existing_issues: Option<PathBuf>,
    /// Label of the tracker's issues.
    #[arg(long, default_value = DEFAULT_LABEL)]
    label: String,
    /// The GitHub CLI to run.
    #[arg(long, value_name = "PROGRAM", default_value = "gh")]
    gh: String,
    /// The npm client to run.
    #[arg(long, value_name = "PROGRAM", default_value = "npm")]
    npm: String,
    /// Exit non-zero when a tag source could not be read (after reporting what was found).
    #[arg(long)]
    strict: bool,
}

#[derive(Args, Debug)]
struct AddArgs {
    /// The upstream tag to add, vX.Y.Z.
    tag: Tag,
    /// Add (or replace) the npm alternate instead: a package version that embeds the tag's
    /// Core, PACKAGE@VERSION (its Core/ tree hash is recorded next to the git source).
    #[arg(long, value_name = "PACKAGE@VERSION", conflicts_with = "core_dir")]
    npm: Option<String>,
    /// No fetchable source: a local Core directory of the tag (holding MMKVPredef.h). A new
    /// entry gets `source: none` and the build uses `MMKV_CORE_<TAG>=DIR`.
    #[arg(long, value_name = "DIR")]
    core_dir: Option<PathBuf>,
    /// Repository to fetch the tag from [default: $MMKV_GIT_URL, else upstream]; the entry
    /// always records the upstream URL.
    #[arg(long, value_name = "URL", conflicts_with_all = ["npm", "core_dir"])]
    git_url: Option<String>,
    /// Accept a Core whose MMKVPredef.h declares this version instead of TAG (for tags whose
    /// header was not bumped, e.g. v2.1.1 says v2.1.0). Add a `note:` to the entry.
    #[arg(long, value_name = "VERSION")]
    accept_predef: Option<String>,
    /// Only edit versions.yaml; skip recording the corpus and running the tests.
    #[arg(long)]
    no_test: bool,
    /// versions.yaml to edit [default: the nearest one from the current directory up].
    #[arg(long, value_name = "FILE")]
    versions: Option<PathBuf>,
    /// The npm client to run.
    #[arg(long, value_name = "PROGRAM", default_value = "npm")]
    npm_program: String,
}

fn versions_path(given: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(p) = given {
        return Ok(p);
    }
    let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
    find_versions_file(&cwd).ok_or_else(|| Error::Versions {
        path: cwd.join("versions.yaml"),
        message: "not found here or in any parent directory (use --versions)".into(),
    })
}

fn check(args: CheckArgs) -> Result<()> {
    let path = versions_path(args.versions)?;
    let known = VersionsFile::load(&path)?.known();
    let upstream = match &args.tags_from {
        Some(file) => {
            let text = std::fs::read_to_string(file).map_err(|e| Error::io(file, e))?;
            Ok(parse_tag_list(&text))
        }
        None => ls_remote_tags(
            &args.upstream_url,
            Duration::from_secs(args.ls_remote_timeout),
        )
        .map_err(|e| e.to_string()),
    };
    let npm_cli = NpmCli {
        program: args.npm.clone(),
    };
    let packing = PackingProbe { client: &npm_cli };
    let fixture = args
        .npm_from
        .as_deref()
        .map(FixtureProbe::load)
        .transpose()?;
    let probe: Option<&dyn CoreProbe> = match (&fixture, args.no_npm) {
        (_, true) => None,
        (Some(f), false) => Some(f),
        (None, false) => Some(&packing),
    };
    let mut packages: Vec<String> = DEFAULT_PACKAGES.iter().map(|s| s.to_string()).collect();
    for p in args.npm_packages {
        if !packages.contains(&p) {
            packages.push(p);
        }
    }
    let list_tracker = args
        .existing_issues
        .as_deref()
        .map(ListTracker::load)
        .transpose()?;
    let gh = GhCli::new(args.gh.clone(), args.label.clone());
    let issues: Option<&dyn IssueTracker> = match (&list_tracker, args.dry_run) {
        (Some(t), _) => Some(t),
        (None, true) => None,
        (None, false) => Some(&gh),
    };
    let opts = CheckOptions {
        dry_run: args.dry_run,
        since: args.since,
        packages,
        npm_max: args.npm_max,
        label: args.label,
        strict: args.strict,
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let report = run_check(&known, upstream, probe, issues, &opts, &mut out)?;
    eprintln!(
        "track-upstream: {} new tag(s), {} already reported, {} issue(s) opened, {} warning(s)",
        report.new_tags.len(),
        report.already_reported.len(),
        report.opened.len(),
        report.warnings.len()
    );
    Ok(())
}

fn add_version(args: AddArgs) -> Result<()> {
    let path = versions_path(args.versions)?;
    let repo_root = path
        .parent()
        .map(Path::to_path_buf)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."));
    let tag = args.tag;
    let current = current_source(&path, tag)?;
    let source = match (&args.npm, &args.core_dir) {
        (Some(spec), _) => {
            let (package, version) = split_package_spec(spec)?;
            let client = NpmCli {
                program: args.npm_program.clone(),
            };
            let npm = resolve_npm_source(
                &client,
                tag,
                &package,
                &version,
                args.accept_predef.as_deref(),
            )?;
            let tree = npm.core_tree.clone().unwrap_or_default();
            let same = current.git.as_ref().map(|g| g.core_tree == tree);
            println!(
                "{package}@{version}: Core at {}, integrity {} (matches the registry), Core/ tree {tree}{}",
                npm.path,
                npm.integrity,
                match same {
                    Some(true) => " = the tag's",
                    Some(false) => " != the tag's: say what differs in the entry's note",
                    None => "",
                }
            );
            Source {
                git: current.git.clone(),
                npm: Some(npm),
            }
        }
        (None, Some(dir)) => {
            check_core_dir(tag, dir, args.accept_predef.as_deref())?;
            println!("{}: MMKVPredef.h matches {tag}", dir.display());
            current.clone()
        }
        (None, None) => {
            let url = args
                .git_url
                .clone()
                .or_else(|| std::env::var(GIT_URL_VAR).ok().filter(|v| !v.is_empty()))
                .unwrap_or_else(|| UPSTREAM_URL.to_string());
            let git = resolve_git_source(tag, &url, args.accept_predef.as_deref())?;
            println!(
                "{url}: refs/tags/{tag} fetched, MMKVPredef.h matches, Core/ tree {}",
                git.core_tree
            );
            Source {
                git: Some(git),
                npm: current.npm.clone(),
            }
        }
    };
    match update_versions_file(&path, tag, &source)? {
        EditAction::Added {
            features_from: Some(from),
        } => println!(
            "{}: added {tag} (features copied from {from}: review them)",
            path.display()
        ),
        EditAction::Added {
            features_from: None,
        } => {
            println!(
                "{}: added {tag} (no features: fill them in)",
                path.display()
            )
        }
        EditAction::SourceReplaced => println!("{}: updated the source of {tag}", path.display()),
        EditAction::Unchanged => println!("{}: {tag} already has this source", path.display()),
    }
    if args.no_test {
        return Ok(());
    }
    let core_dir = match &args.core_dir {
        Some(d) => Some(std::fs::canonicalize(d).map_err(|e| Error::io(d, e))?),
        None => None,
    };
    let anchors = anchors(&VersionsFile::load(&path)?)?;
    let steps = test_steps(tag, &repo_root, core_dir.as_deref(), &anchors);
    let records = steps
        .iter()
        .any(|s| s.cargo_args.iter().any(|a| a == "record"));
    let stdout = std::io::stdout();
    run_steps(&steps, &repo_root, &mut stdout.lock())?;
    let corpus = if records {
        format!("corpus/{tag} recorded")
    } else {
        format!("corpus/{tag} already present")
    };
    println!("{tag}: {corpus}, mmkv-sys and conformance tests pass; commit versions.yaml and corpus/{tag}");
    Ok(())
}

fn plan(args: PlanArgs) -> Result<()> {
    let path = versions_path(args.versions)?;
    let slices = plan_slices(&VersionsFile::load(&path)?, args.slices)?;
    println!(
        "{}",
        serde_json::to_string(&slices).map_err(|e| Error::Plan(e.to_string()))?
    );
    Ok(())
}

fn hunt_issues(args: HuntArgs) -> Result<()> {
    let summaries = args
        .summaries
        .iter()
        .map(|p| Ok((p.clone(), hunt::load(p)?)))
        .collect::<Result<Vec<_>>>()?;
    let findings = merge(&summaries);
    let list_tracker = args
        .existing_issues
        .as_deref()
        .map(ListTracker::load)
        .transpose()?;
    let gh = GhCli::new(args.gh.clone(), args.label.clone())
        .with_label_description(HUNT_LABEL_DESCRIPTION);
    let tracker: Option<&dyn IssueTracker> = match (&list_tracker, args.dry_run) {
        (Some(t), _) => Some(t),
        (None, true) => None,
        (None, false) => Some(&gh),
    };
    let opts = HuntIssueOptions {
        dry_run: args.dry_run,
        label: args.label,
        run_url: args.run_url,
    };
    let stdout = std::io::stdout();
    let report = run_hunt_issues(&findings, tracker, &opts, &mut stdout.lock())?;
    eprintln!(
        "track-upstream: {} summary(ies), {} signature(s): {} new, {} issue(s) opened, {} update(s), {} comment(s), {} unchanged",
        summaries.len(),
        findings.len(),
        report.new.len(),
        report.opened.len(),
        report.updates.len(),
        report.commented.len(),
        report.unchanged.len()
    );
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::AddVersion(args)) => add_version(args),
        Some(Command::PlanSlices(args)) => plan(args),
        Some(Command::HuntIssues(args)) => hunt_issues(args),
        None => check(cli.check),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = std::io::stdout().flush();
            eprintln!("track-upstream: error: {e}");
            ExitCode::FAILURE
        }
    }
}
