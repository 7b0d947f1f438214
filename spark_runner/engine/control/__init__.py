"""The controller on the driver and what it steers: admission, pace, executors, the
background hog."""
