(* binary-trees (Benchmarks Game). usage: binary_trees N
   Every node is a freshly allocated block, leaves included: a leaf is
   [Node (Nil, Nil)], a node with two empty children, as the C, Java, Go and
   Mosaic peers allocate a node with two null children. [fresh_leaf] goes
   through [Sys.opaque_identity] so that ocamlopt cannot turn the leaf into one
   statically allocated constant shared by every tree (which it does for
   [Node (Nil, Nil)] written out, halving the allocations).
   Timed in-process (TIME ms) with the monotonic clock of clock.c. *)
type tree = Nil | Node of tree * tree

external monotonic_ms : unit -> float = "mosaic_monotonic_ms"

let fresh_leaf () = Node (Sys.opaque_identity Nil, Nil)

let rec make d = if d = 0 then fresh_leaf () else Node (make (d - 1), make (d - 1))
let rec check = function Nil -> 0 | Node (l, r) -> 1 + check l + check r

let () =
  let n = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 10 in
  let min_depth = 4 in
  let max_depth = max (min_depth + 2) n in
  let start = monotonic_ms () in
  let total = ref (check (make (max_depth + 1))) in
  let long_lived = make max_depth in
  let d = ref min_depth in
  while !d <= max_depth do
    for _ = 1 to 1 lsl (max_depth - !d + min_depth) do
      total := !total + check (make !d)
    done;
    d := !d + 2
  done;
  total := !total + check long_lived;
  Printf.printf "TIME %.3f\n" (monotonic_ms () -. start);
  let s = Gc.quick_stat () in
  Printf.printf "RESULT {\"check\": %d, \"collections\": %d, \"minor_words\": %.0f}\n" !total
    (s.Gc.minor_collections + s.Gc.major_collections)
    s.Gc.minor_words
