;;; Guile threads, futures and deep recursion under collection, for the
;;; drop-in test harness (scripts/dropin/run-tests.sh), and a threaded
;;; allocation load for the benchmark (mosaic-bench's guile cases).
;;;
;;; Run: guile --no-auto-compile -s threads.scm [THREADS [ROUNDS]]
;;; With THREADS given, only the allocation load runs: THREADS threads
;;; each build and drop ROUNDS lists of 1000 fresh pairs and vectors,
;;; and the sum of their results is printed. Without arguments, the
;;; checks run (with a small load), and the exit status is 0 when all
;;; pass.

(use-modules (ice-9 threads)
             (ice-9 futures)
             (ice-9 format)
             (srfi srfi-1))

(define (alloc-worker rounds seed)
  ;; Every round: 1000 pairs holding small vectors, then a fold over them.
  (let loop ((r 0) (acc 0))
    (if (= r rounds)
        acc
        (let* ((lst (map (lambda (i) (cons i (make-vector 3 (+ i seed)))) (iota 1000)))
               (s (fold (lambda (p s) (+ s (car p) (vector-ref (cdr p) 2))) 0 lst)))
          (loop (+ r 1) (+ acc (modulo s 1000003)))))))

(define (alloc-load threads rounds)
  (let ((ts (map (lambda (k) (call-with-new-thread (lambda () (alloc-worker rounds k))))
                 (iota threads))))
    (fold + 0 (map join-thread ts))))

(define args (cdr (command-line)))
(if (pair? args)
    (let ((threads (string->number (car args)))
          (rounds (if (pair? (cdr args)) (string->number (cadr args)) 2000)))
      (format #t "~a~%" (alloc-load threads rounds))
      (exit 0)))

(define failures 0)
(define (check ok what)
  (format #t "~60a ~a~%" what (if ok "ok" "FAILED"))
  (unless ok (set! failures (+ failures 1))))

;; Deep (non-tail) recursion: Guile grows its stack; every frame is a root.
(define (deep-sum n) (if (= n 0) 0 (+ n (deep-sum (- n 1)))))
(check (= (deep-sum 1000000) 500000500000) "recursion 1000000 deep")
(define (deep-list n) (if (= n 0) '() (cons (make-string 2 #\d) (deep-list (- n 1)))))
(check (= (length (deep-list 300000)) 300000) "list built by recursion 300000 deep")

;; Futures: run on Guile's worker threads, touched from this one.
(define fs (map (lambda (k) (future (fold + 0 (map (lambda (i) (* i k)) (iota 50000)))))
                (iota 8 1)))
(define fsum (map touch fs))
(format #t "future results = ~a~%" fsum)
(check (equal? fsum (map (lambda (k) (* k (/ (* 50000 49999) 2))) (iota 8 1))) "8 futures")

;; Threads sharing a mutex-protected counter and allocating.
(define counter 0)
(define m (make-mutex))
(define ts (map (lambda (k)
                  (call-with-new-thread
                   (lambda ()
                     (do ((i 0 (+ i 1))) ((= i 2000))
                       (with-mutex m (set! counter (+ counter 1)))
                       (make-list 20 k)))))
                (iota 6)))
(for-each join-thread ts)
(check (= counter 12000) "6 threads sharing a mutex")

;; The allocation load, small.
(format #t "allocation load = ~a~%" (alloc-load 4 50))
(check (= (alloc-load 3 20) (+ (alloc-worker 20 0) (alloc-worker 20 1) (alloc-worker 20 2)))
       "threads' results match one thread's")

(format #t "~a~%" (if (= failures 0) "all checks passed" "SOME CHECKS FAILED"))
(exit (if (= failures 0) 0 1))
