//! The cases' runners: limits, twins and skips.
use super::*;

pub(super) fn peers() -> Peers {
    let none: Built = Err("not built in tests".into());
    Peers {
        boehm_gcbench: Ok("/bin/boehm_gcbench".into()),
        boehm_gcbench_inline: Ok("/bin/boehm_gcbench_inline".into()),
        mosaic_c_gcbench: Ok("/bin/mosaic_c_gcbench".into()),
        boehm_binary_trees: none.clone(),
        boehm_binary_trees_inline: none.clone(),
        c_nqueens: none.clone(),
        alloc_glibc: none.clone(),
        alloc_jemalloc: none.clone(),
        alloc_mimalloc: none.clone(),
        threads_boehm: Ok("/bin/threads_boehm".into()),
        threads_glibc: none.clone(),
        threads_jemalloc: none.clone(),
        threads_mimalloc: none.clone(),
        ocaml_nqueens: none.clone(),
        ocaml_binary_trees: none.clone(),
        java: Ok("/classes".into()),
        mosaic_libgc: Ok("/lib/mosaic".into()),
        go_gcbench: none.clone(),
        go_binary_trees: none,
    }
}

#[test]
fn full_only_workloads_are_built_when_named() {
    let quick = Options {
        scaled_depths: vec![16],
        ..Options::default()
    };
    let names = |o: &Options| -> Vec<&str> {
        let mut v: Vec<&str> = all(o, &peers()).iter().map(|c| c.workload).collect();
        v.dedup();
        v
    };
    assert!(!names(&quick).contains(&"gcbench-scaled"));
    let named = Options {
        named: vec!["gcbench-scaled".into()],
        ..quick.clone()
    };
    let cases = all(&named, &peers());
    let scaled: Vec<&Case> = cases
        .iter()
        .filter(|c| c.workload == "gcbench-scaled")
        .collect();
    assert_eq!(scaled.len(), 1);
    let p = gcbench::Params::scaled(16);
    assert_eq!(scaled[0].expected, Some(p.expected_check()));
    let boehm = &scaled[0].runners[1];
    assert_eq!(boehm.args, p.peer_args(1));
    let heap = (2 * p.peak_live_bytes()).to_string();
    let env = [
        ("GC_MAXIMUM_HEAP_SIZE".to_string(), heap.clone()),
        ("GC_INITIAL_HEAP_SIZE".to_string(), heap),
    ];
    assert_eq!(boehm.env, env);
    let inline = &scaled[0].runners[2];
    assert_eq!(inline.peer, "boehm-inline");
    assert_eq!((&inline.args, &inline.env), (&boehm.args, &boehm.env));
    let full = Options {
        full: true,
        ..quick
    };
    let sweep: Vec<Case> = all(&full, &peers())
        .into_iter()
        .filter(|c| c.workload == "heap-sweep")
        .collect();
    assert_eq!(sweep.len(), 6);
    let policies: Vec<&str> = sweep[0]
        .runners
        .iter()
        .flat_map(|r| r.env.iter())
        .filter(|(k, _)| k == "MOSAIC_HEAP_POLICY")
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(policies, ["fixed", "proportional", "adaptive"]);
    let boehms: Vec<&str> = sweep[0]
        .runners
        .iter()
        .filter(|r| r.runtime == Runtime::Boehm)
        .map(|r| r.peer.as_str())
        .collect();
    assert_eq!(boehms, ["boehm", "boehm-inline"]);
}

/// Each `X-on-mosaic` runner of `case` is `X` (same program, arguments
/// and environment) plus `LD_LIBRARY_PATH` = Mosaic's library directory.
fn assert_dropin_twins(case: &Case, lib: &str, want: &[&str]) {
    let dropin: Vec<&Runner> = case
        .runners
        .iter()
        .filter(|r| r.runtime == Runtime::BoehmOnMosaic)
        .collect();
    let names: Vec<&str> = dropin.iter().map(|r| r.peer.as_str()).collect();
    assert_eq!(names, want, "{} {}", case.workload, case.variant);
    for d in dropin {
        let name = d.peer.strip_suffix("-on-mosaic").unwrap();
        let real = case.runners.iter().find(|r| r.peer == name).unwrap();
        assert_eq!(real.runtime, Runtime::Boehm);
        assert_eq!(
            (&d.program, &d.args, &d.skip),
            (&real.program, &real.args, &real.skip)
        );
        let (last, rest) = d.env.split_last().unwrap();
        assert_eq!(rest, &real.env[..]);
        assert_eq!(last, &("LD_LIBRARY_PATH".to_string(), lib.to_string()));
    }
}

#[test]
fn every_boehm_runner_has_a_twin_on_mosaics_libgc() {
    let full = Options {
        full: true,
        scaled_depths: vec![16],
        ..Options::default()
    };
    let cases = all(&full, &peers());
    let both = ["boehm-on-mosaic", "boehm-inline-on-mosaic"];
    for case in &cases {
        match case.workload {
            "gcbench" | "gcbench-holes" | "binary-trees" | "nqueens" => {
                assert_dropin_twins(case, "/lib/mosaic", &both)
            }
            "threads" => assert_dropin_twins(case, "/lib/mosaic", &["boehm-on-mosaic"]),
            _ => assert_dropin_twins(case, "/lib/mosaic", &[]),
        }
    }
    // GCBench's limit (with holes: the cap alone) reaches the drop-in,
    // at 1 and 2 threads.
    let g: Vec<&Case> = cases
        .iter()
        .filter(|c| c.workload.starts_with("gcbench") && c.heap_factor == Some(2.0))
        .filter(|c| c.workload != "gcbench-scaled")
        .collect();
    assert_eq!(g.len(), 4);
    for c in g {
        let d = c
            .runners
            .iter()
            .find(|r| r.peer == "boehm-on-mosaic")
            .unwrap();
        let vars: Vec<&str> = d.env.iter().map(|(k, _)| k.as_str()).collect();
        if c.workload == "gcbench-holes" {
            assert_eq!(vars, ["GC_MAXIMUM_HEAP_SIZE", "LD_LIBRARY_PATH"]);
        } else {
            assert_eq!(
                vars,
                [
                    "GC_MAXIMUM_HEAP_SIZE",
                    "GC_INITIAL_HEAP_SIZE",
                    "LD_LIBRARY_PATH"
                ]
            );
        }
    }
    // n-queens: one binary, the mode in its first argument.
    let q = cases.iter().find(|c| c.workload == "nqueens").unwrap();
    let inline = q
        .runners
        .iter()
        .find(|r| r.peer == "boehm-inline-on-mosaic")
        .unwrap();
    assert_eq!(inline.args[0], "boehm-inline");
}

#[test]
fn without_mosaics_libgc_the_twins_are_skipped_with_the_reason() {
    let mut p = peers();
    p.mosaic_libgc = Err("building Mosaic's libgc.so.1 failed: boom".into());
    p.boehm_gcbench_inline = Err("gc.h not found (package libgc-dev)".into());
    let cases = all(&Options::default(), &p);
    let g = cases.iter().find(|c| c.workload == "gcbench").unwrap();
    let skip = |name: &str| {
        g.runners
            .iter()
            .find(|r| r.peer == name)
            .unwrap()
            .skip
            .clone()
            .unwrap()
    };
    assert!(skip("boehm-on-mosaic").contains("boom"));
    // A Boehm peer that did not build: its own reason first.
    assert!(skip("boehm-inline-on-mosaic").contains("libgc-dev"));
    // The real library's runners are unchanged.
    assert!(g
        .runners
        .iter()
        .any(|r| r.peer == "boehm" && r.skip.is_none()));
}

#[test]
fn jvm_warmup_reaches_the_java_runners() {
    let o = Options {
        jvm_warmup: 3,
        ..Options::default()
    };
    let cases = all(&o, &peers());
    let java: Vec<&Runner> = cases
        .iter()
        .flat_map(|c| c.runners.iter())
        .filter(|r| r.runtime == Runtime::Java)
        .collect();
    assert!(!java.is_empty());
    // Every warm runner warms up; one cold G1 runner per case does not.
    let (cold, warm): (Vec<&Runner>, Vec<&Runner>) =
        java.iter().partition(|r| r.peer.ends_with("-cold"));
    assert!(warm
        .iter()
        .all(|r| r.args.contains(&"-Dmosaic.warmup=3".to_string())));
    assert!(!cold.is_empty() && cold.iter().all(|r| r.peer == "java-g1-cold"));
    assert!(cold
        .iter()
        .all(|r| !r.args.iter().any(|a| a.contains("warmup"))));
    let cold = all(&Options::default(), &peers());
    assert!(cold
        .iter()
        .flat_map(|c| c.runners.iter())
        .all(|r| !r.args.iter().any(|a| a.contains("warmup"))));
}
